import type { AuditActor } from "../audit/audit-log.js";
import { lineage, type SessionOf } from "../lineage.js";
import type { TokenServiceDeps } from "./credentials.js";
import type { IdClaims } from "./jwt-strategy.js";
import type { RevocationScope } from "./repository.js";

/** Revoking tokens: a credential's lineage, one sign-out, or the sessions in a scope. */
export class Revocations {
  constructor(
    private readonly d: Pick<TokenServiceDeps, "audit" | "clock" | "jwt" | "log" | "refreshTokens" | "transaction">,
  ) {}

  /**
   * Revokes, at once, every token that descends from the credentials named (see lineage.ts): those issued before
   * now are refused at their next call, and the open streams they opened end (the stream guard re-checks).
   */
  async revokeLineage(ids: readonly string[], keep?: SessionOf): Promise<void> {
    // One millisecond on: a token issued in the very millisecond of the revocation is refused too.
    const at = this.d.clock.now() + 1;
    await this.d.refreshTokens.revokeLineage(ids, at);
    // The session that changed the password proved the current one: it is carried over, the others end.
    if (keep?.sessionId) await this.d.refreshTokens.revokeLineage([lineage.carried(keep.sessionId)], at);
  }

  /** Signs out of one ID token's session (the console's sign-out): that token is refused from then on. */
  async signOut(token: string): Promise<void> {
    let claims: IdClaims;
    try {
      claims = await this.d.jwt.verifyId(token);
    } catch {
      return; // An expired or foreign token needs no revoking.
    }
    if (claims.sessionId) await this.revokeLineage([lineage.session(claims.sessionId)]);
  }

  /** Revokes refresh tokens in scope, and the live access tokens of the same users. */
  async revoke(scope: RevocationScope, who?: AuditActor): Promise<number> {
    const log = this.d.log;
    if (!log) return this.d.refreshTokens.revoke(scope, this.d.clock.now());
    return this.d.transaction(async (tx) => {
      const n = await tx.refreshTokens.revoke(scope, this.d.clock.now());
      // The customer's user_id stays out of the audit log (it would outlive their erasure): only that one was named.
      const details = { chatbot_id: scope.chatbotId ?? "", by_user_id: scope.userId ? "yes" : "no", revoked: n };
      if (who) await this.d.audit?.record(tx, who, "session.revoked", scope.chatbotId ?? "", details);
      await log.record(tx, scope.accountId, [
        {
          type: "session.revoked",
          data: { chatbotId: scope.chatbotId ?? "", userId: scope.userId ?? "", revoked: n },
        },
      ]);
      return n;
    });
  }
}
