import { unauthenticated } from "../errors.js";
import { hashSecret, sameHash } from "../ids.js";
import { requireText } from "../validate.js";
import {
  accountForKey,
  BAD_REFRESH,
  deriveSuccessor,
  frameIds,
  type RefreshedTokens,
  type TokenServiceDeps,
  touchSession,
  UnknownCredentialError,
} from "./credentials.js";
import type { RefreshTokenRecord } from "./repository.js";
import { newRotationSalt } from "./rotation.js";

/** Refreshing a session: a new access token, and with rotation the refresh token's successor. */
export class TokenRefresh {
  constructor(
    private readonly d: Pick<
      TokenServiceDeps,
      "accounts" | "admit" | "apiKeys" | "chatbots" | "clock" | "jwt" | "refreshTokens" | "ttl"
    >,
  ) {}

  /**
   * Issues a new access token from a refresh token. The refresh token is kept, unless the chatbot's session policy
   * rotates them: then the answer also carries its successor, and the one presented is retired. A retired token
   * presented again within the grace answers the same successor (a lost response can be retried); after it, or
   * once the successor has itself been rotated, it ends the session (its refresh token and live access tokens).
   */
  async refresh(input: {
    userId: string;
    chatbotId: string;
    refreshToken: string;
    clientApiKey?: string | undefined;
    userAgent?: string | undefined;
  }): Promise<RefreshedTokens> {
    const { userId, chatbotId } = frameIds(input);
    requireText("refresh_token", input.refreshToken);
    const hash = hashSecret(input.refreshToken);
    const now = this.d.clock.now();
    // Read side by side (a back end may send them in one round trip): the token with its account's state, the
    // chatbot and its session policy. Each is checked below before anything is issued or written.
    const [found, chatbot, policy] = await Promise.all([
      this.d.refreshTokens.byHashWithAccount(hash),
      this.d.chatbots.byId(chatbotId),
      this.d.refreshTokens.policy(chatbotId),
    ]);
    let rec = found?.token;
    let accountActive = found?.accountActive === true;
    let successor: { token: string; expiresAt: number } | undefined;
    if (!rec) {
      const retired = await this.d.refreshTokens.rotated(hash);
      const session = retired && (await this.d.refreshTokens.bySession(retired.sessionId));
      if (!retired || !session || session.userId !== userId || session.chatbotId !== chatbotId)
        throw new UnknownCredentialError(BAD_REFRESH);
      const token = deriveSuccessor(input.refreshToken, retired.successorSalt);
      const grace = policy?.reuseGraceMs ?? 0;
      const current = sameHash(session.tokenHash, hashSecret(token));
      if (session.revokedAt !== null) throw unauthenticated(BAD_REFRESH);
      if (!current || now - retired.rotatedAt > grace) {
        // Reuse of a retired refresh token: it may have been stolen. The whole session ends.
        await this.d.refreshTokens.revokeSession(session.accountId, session.sessionId, now);
        throw unauthenticated(BAD_REFRESH);
      }
      rec = session;
      accountActive = (await this.d.accounts.byId(session.accountId))?.active === true;
      successor = { token, expiresAt: session.expiresAt };
    } else if (!sameHash(rec.tokenHash, hash) || rec.userId !== userId || rec.chatbotId !== chatbotId)
      throw new UnknownCredentialError(BAD_REFRESH);
    // A revoked token is one we issued: refused the same way, but not counted as a guess.
    if (rec.revokedAt !== null) throw unauthenticated(BAD_REFRESH);
    if (rec.expiresAt <= now) throw unauthenticated("refresh_token has expired", "TokenExpiredError");
    if (!chatbot?.active || chatbot.accountId !== rec.accountId || !accountActive) throw unauthenticated(BAD_REFRESH);
    if (input.clientApiKey) {
      const keyAccount = await accountForKey(this.d, input.clientApiKey);
      if (!keyAccount || keyAccount.accountId !== rec.accountId) throw new UnknownCredentialError(BAD_REFRESH);
      await keyAccount.markUsed();
    }
    await this.d.admit?.(rec.accountId);
    if (!successor && policy?.rotate) successor = await this.rotate(rec, input.refreshToken, now);
    const access = await this.d.jwt.signAccess(
      { accountId: rec.accountId, chatbotId, userId, sessionId: rec.sessionId },
      this.d.ttl.access,
    );
    await touchSession(this.d, rec.sessionId, now, null, input.userAgent, rec);
    return {
      accessToken: access.token,
      expiresAt: access.expiresAt,
      ...(successor ? { refreshToken: successor } : {}),
    };
  }

  /** Retires `token` for a successor derived from it; a concurrent refresh that rotated it first wins. */
  private async rotate(
    rec: RefreshTokenRecord,
    token: string,
    now: number,
  ): Promise<{ token: string; expiresAt: number }> {
    const salt = newRotationSalt();
    const next = deriveSuccessor(token, salt);
    if (await this.d.refreshTokens.rotate(rec.sessionId, rec.tokenHash, hashSecret(next), salt, now))
      return { token: next, expiresAt: rec.expiresAt };
    // Rotated at the same moment by another request with the same token: answer what that one answered.
    const retired = await this.d.refreshTokens.rotated(rec.tokenHash);
    if (!retired) throw unauthenticated(BAD_REFRESH);
    return { token: deriveSuccessor(token, retired.successorSalt), expiresAt: rec.expiresAt };
  }
}
