import { hashSecret, newId, newSecret } from "../ids.js";
import { LAUNCH_CODE_PREFIX, REFRESH_TOKEN_PREFIX } from "../token/credentials.js";
import type { LaunchCodeRecord, RefreshTokenRecord } from "../token/repository.js";

/** The repositories a link is written to, in one unit of work. */
export interface LaunchLinkRepositories {
  refreshTokens: { insert(r: RefreshTokenRecord): Promise<void> };
  launchCodes: { insert(r: LaunchCodeRecord): Promise<void> };
}

export interface LaunchLinkDeps {
  transaction: <T>(fn: (tx: LaunchLinkRepositories) => Promise<T>) => Promise<T>;
  now(): number;
  /** How long the link works (a launch code that expires). */
  ttlMs: number;
  /** The origin of the page that opens it (this service's mail page): the only one the code may be used from. */
  origin: string;
}

/**
 * The link of a reply mail: a new session of the customer (chatbot, user) and a launch code for it, valid once and
 * until `ttlMs`, bound to this service's own page. It is exchanged by the frame like any launch code
 * (token/launch-codes.ts: used once, refused after expiry, refused for another chatbot or origin); the session's
 * refresh token is never told to anyone, so the link is the only way into it, once. Nothing of it is stored plain.
 */
export class MailLaunchLinks {
  constructor(private readonly d: LaunchLinkDeps) {}

  async issue(who: { accountId: string; chatbotId: string; userId: string }): Promise<string> {
    const now = this.d.now();
    const code = newSecret(LAUNCH_CODE_PREFIX);
    const sessionId = newId();
    const expiresAt = now + this.d.ttlMs;
    await this.d.transaction(async (tx) => {
      await tx.refreshTokens.insert({
        // A refresh token nobody holds: the session is reached through the launch code alone.
        tokenHash: hashSecret(newSecret(REFRESH_TOKEN_PREFIX)),
        sessionId,
        ...who,
        createdAt: now,
        expiresAt,
        revokedAt: null,
        lastUsedAt: now,
        lastOrigin: "",
        userAgent: "",
      });
      await tx.launchCodes.insert({
        codeHash: hashSecret(code),
        ...who,
        sessionId,
        origin: this.d.origin,
        createdAt: now,
        expiresAt,
        usedAt: null,
      });
    });
    return code;
  }
}
