import { apiKeyUsable } from "../account/api-keys.js";
import type { ChatbotRecord } from "../account/repository.js";
import { ownerCaller, resolvePerson } from "../account/team-service.js";
import type { AccountCaller, EveryProperty } from "../caller.js";
import { unauthenticated } from "../errors.js";
import { lineage, lineageOf } from "../lineage.js";
import type { TokenServiceDeps } from "./credentials.js";
import type { AccessClaims, IdClaims } from "./jwt-strategy.js";

/** The lineage of each kept ID token's claims, made once per token (the claims are kept, and never changed). */
const lineages = new WeakMap<IdClaims, readonly string[]>();

/** The revocation ids of an ID token's claims, frozen: the same array on every call with the token. */
function lineageFor(claims: IdClaims): readonly string[] {
  let ids = lineages.get(claims);
  if (!ids) {
    ids = Object.freeze(lineageOf(claims));
    lineages.set(claims, ids);
  }
  return ids;
}

/** Checking presented tokens on each call: signature, expiry, revocation, and that what they name is still active. */
export class TokenChecks {
  constructor(
    private readonly d: Pick<TokenServiceDeps, "chatbots" | "clock" | "jwt" | "members" | "refreshTokens" | "teams">,
  ) {}

  /**
   * Checks the frame's access token: signature, type, expiry, revocation, and that the chatbot is still active. The
   * valid token's claims are handed to `admitted`, and any failure to `refused` (what it answers is the rejection),
   * inside the check's own reaction: a caller's reaction on its promise would be one more turn of the microtask queue
   * on every frame call.
   */
  authenticateFrame<T>(
    token: string,
    admitted: (claims: AccessClaims) => T,
    refused: (e: unknown) => unknown,
  ): Promise<T> {
    // A reaction on the read, not an async function awaiting it: every frame call comes here, and an async function's
    // await costs more (its closures, the function's suspension and resumption). A throw is the promise's rejection.
    try {
      const kept = this.d.jwt.keptAccess(token);
      if (kept) return this.frameStillValid(kept, admitted, refused);
      return this.d.jwt.verifyAccess(token).then(
        (claims) => this.frameStillValid(claims, admitted, refused),
        (e: unknown) => {
          throw refused(e);
        },
      );
    } catch (e) {
      return Promise.reject(refused(e));
    }
  }

  /** The access token's claims once its session is found not revoked and its chatbot still active (its account's). */
  private frameStillValid<T>(
    claims: AccessClaims,
    admitted: (claims: AccessClaims) => T,
    refused: (e: unknown) => unknown,
  ): Promise<T> {
    return this.d.refreshTokens.frameAccess(claims.chatbotId, claims.userId, claims.sessionId).then(
      ({ notBefore, chatbot }) => {
        if (notBefore !== undefined && claims.issuedAt < notBefore)
          throw refused(unauthenticated("the access token has been revoked", "TokenRevokedError"));
        if (!chatbot?.active || chatbot.accountId !== claims.accountId)
          throw refused(unauthenticated("the access token is invalid"));
        return admitted(claims);
      },
      (e: unknown) => {
        throw refused(e);
      },
    );
  }

  /**
   * Checks an ID token, that its account is still active and that the person it names still belongs to it; the
   * caller carries the role they have now (a role change or a removal takes effect on the next call).
   */
  async authenticateAccount(token: string): Promise<IdClaims & { caller: AccountCaller }> {
    const claims = this.d.jwt.keptId(token) ?? (await this.d.jwt.verifyId(token));
    // Read together (one call, one round trip's wait): the account, its lineage's revocations, the key. Valid only
    // while every credential it descends from is: the person, the password, its session, the key.
    const { account, notBefore, keys } = await this.d.refreshTokens.idTokenAccess(
      claims.accountId,
      lineageFor(claims),
      !!claims.apiKeyId,
    );
    // The account's owner (as a rule) without a promise; a member is read.
    const caller = account?.active
      ? (ownerCaller(account, claims.email) ?? (await resolvePerson(this.d.members, account, claims.email)))
      : undefined;
    if (!caller) throw unauthenticated("the ID token is invalid");
    // An operator sees the chatbots of their teams and those of no team; an admin sees all (teams.ts).
    if (caller.role === "operator" && this.d.teams) {
      const hidden = await this.d.teams.hiddenFor(caller.accountId, caller.memberId);
      if (hidden.length > 0) caller.hiddenChatbots = hidden;
    }
    if (notBefore !== undefined && claims.issuedAt < notBefore && !(await this.carried(claims)))
      throw unauthenticated("the ID token has been revoked: sign in again", "TokenRevokedError");
    if (claims.apiKeyId) {
      const key = keys?.find((k) => k.apiKeyId === claims.apiKeyId);
      if (!key || !apiKeyUsable(key, this.d.clock.now()))
        throw unauthenticated(
          "the ID token has been revoked: the API key it was minted with no longer works",
          "TokenRevokedError",
        );
    }
    // Written out, not `{ ...claims, caller }`: V8 adds the properties after a spread on its slow path (a map
    // migration each), on every call with an ID token. An absent optional claim is an undefined property here.
    const out: EveryProperty<IdClaims> & { caller: AccountCaller } = {
      accountId: claims.accountId,
      email: claims.email,
      sessionId: claims.sessionId,
      apiKeyId: claims.apiKeyId,
      viaPassword: claims.viaPassword,
      issuedAt: claims.issuedAt,
      expiresAt: claims.expiresAt,
      caller,
    };
    return out;
  }

  /**
   * Whether a token revoked only by a password change is the session that made the latest one (the rare path, read
   * only once a lineage is found revoked): neither its person nor its session is revoked, and it was carried over
   * at or after the password's latest revocation.
   */
  private async carried(c: IdClaims): Promise<boolean> {
    if (!c.sessionId || !c.viaPassword) return false;
    const tokens = this.d.refreshTokens;
    const strict = await tokens.lineageNotBefore([lineage.person(c.accountId, c.email), lineage.session(c.sessionId)]);
    if (strict !== undefined && c.issuedAt < strict) return false;
    const password = await tokens.lineageNotBefore([lineage.password(c.accountId, c.email)]);
    const carried = await tokens.lineageNotBefore([lineage.carried(c.sessionId)]);
    return password === undefined || (carried !== undefined && carried >= password);
  }

  /** The chatbot an access token is for (the frame needs its settings). */
  chatbot(chatbotId: string): Promise<ChatbotRecord | undefined> {
    return this.d.chatbots.byId(chatbotId);
  }
}
