import { hashSecret, requireUuid, sameHash } from "../ids.js";
import { requireText } from "../validate.js";
import {
  BAD_LAUNCH,
  LaunchRefusedError,
  originOf,
  type TokenServiceDeps,
  touchSession,
  UnknownCredentialError,
} from "./credentials.js";

/** The frame's launch codes: looked at by the frame page, then exchanged once for an access token. */
export class LaunchCodes {
  constructor(
    private readonly d: Pick<
      TokenServiceDeps,
      "accounts" | "chatbots" | "clock" | "jwt" | "launchCodes" | "refreshTokens" | "ttl"
    >,
  ) {}

  /**
   * What the frame page needs to know of a launch code before the frame exchanges it: the origin it is bound to
   * (the only one that may embed the page), or why it can no longer be used. Nothing is used up.
   */
  async peekLaunchCode(
    chatbotId: string,
    launchCode: string,
  ): Promise<{ origin: string } | { refused: LaunchRefusedError["why"] }> {
    if (launchCode === "" || launchCode.length > 512) return { refused: "unknown" };
    const hash = hashSecret(launchCode);
    const code = await this.d.launchCodes.byHash(hash);
    if (!code || !sameHash(code.codeHash, hash)) return { refused: "unknown" };
    if (code.chatbotId !== chatbotId) return { refused: "chatbot" };
    if (code.usedAt !== null) return { refused: "used" };
    if (code.expiresAt <= this.d.clock.now()) return { refused: "expired" };
    return { origin: code.origin };
  }

  /**
   * The frame's one exchange of its launch code for an access token: the code must be one this service issued, for
   * this chatbot, unused, within its 60 seconds, and presented under the origin it was issued for. It is used up
   * by the first exchange that passes these checks.
   */
  async exchangeLaunchCode(input: {
    chatbotId: string;
    launchCode: string;
    embedOrigin: string;
    userAgent?: string | undefined;
  }): Promise<{ accessToken: string; expiresAt: number; userId: string }> {
    const chatbotId = requireUuid("chatbot_id", input.chatbotId);
    requireText("launch_code", input.launchCode);
    requireText("embed_origin", input.embedOrigin);
    if (input.launchCode.length > 512) throw new UnknownCredentialError(BAD_LAUNCH);
    const hash = hashSecret(input.launchCode);
    const code = await this.d.launchCodes.byHash(hash);
    const now = this.d.clock.now();
    if (!code || !sameHash(code.codeHash, hash)) throw new LaunchRefusedError("unknown", BAD_LAUNCH);
    if (code.chatbotId !== chatbotId) throw new LaunchRefusedError("chatbot", BAD_LAUNCH);
    if (code.usedAt !== null) throw new LaunchRefusedError("used", BAD_LAUNCH);
    if (code.expiresAt <= now) throw new LaunchRefusedError("expired", BAD_LAUNCH);
    if (originOf(input.embedOrigin) !== code.origin) throw new LaunchRefusedError("origin", BAD_LAUNCH);
    const session = await this.d.refreshTokens.bySession(code.sessionId);
    const chatbot = await this.d.chatbots.byId(chatbotId);
    const account = await this.d.accounts.byId(code.accountId);
    if (!session || session.revokedAt !== null || session.expiresAt <= now)
      throw new LaunchRefusedError("session", BAD_LAUNCH);
    if (!chatbot?.active || chatbot.accountId !== code.accountId || !account?.active)
      throw new LaunchRefusedError("chatbot", BAD_LAUNCH);
    if (!(await this.d.launchCodes.markUsed(hash, now))) throw new LaunchRefusedError("used", BAD_LAUNCH);
    const access = await this.d.jwt.signAccess(
      { accountId: code.accountId, chatbotId, userId: code.userId, sessionId: code.sessionId },
      this.d.ttl.access,
    );
    await touchSession(this.d, code.sessionId, now, code.origin, input.userAgent);
    return { accessToken: access.token, expiresAt: access.expiresAt, userId: code.userId };
  }
}
