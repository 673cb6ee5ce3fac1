import type { ContactProfile } from "../conversation/repository.js";
import { notFound } from "../errors.js";
import { hashSecret, newId, newSecret, newTimeOrderedId, requireUuid } from "../ids.js";
import { optionalEmail, optionalText, requireId, requireText } from "../validate.js";
import {
  accountForKey,
  BAD_KEY,
  embedOrigin,
  frameIds,
  type IssuedTokens,
  LAUNCH_CODE_PREFIX,
  LAUNCH_CODE_TTL_MS,
  REFRESH_TOKEN_PREFIX,
  type TokenServiceDeps,
  UnknownCredentialError,
  userAgentOf,
} from "./credentials.js";

/** Issuing the frame's tokens: an API key traded for a session (and a launch code), and the console's preview. */
export class AccessTokens {
  constructor(
    private readonly d: Pick<
      TokenServiceDeps,
      "accounts" | "admit" | "apiKeys" | "chatbots" | "clock" | "contacts" | "jwt" | "transaction" | "ttl"
    >,
  ) {}

  /** Trades an API key for an access and refresh token bound to (account, chatbot, user). */
  async getAccessToken(input: {
    userId: string;
    chatbotId: string;
    clientApiKey: string;
    contact?: ContactProfile | undefined;
    /** Also issue a one-time launch code, bound to embedOrigin (or the chatbot's only allowed origin). */
    launchCode?: boolean | undefined;
    embedOrigin?: string | undefined;
    userAgent?: string | undefined;
  }): Promise<IssuedTokens> {
    const { userId, chatbotId } = frameIds(input);
    requireText("client_api_key", input.clientApiKey);
    const profile = input.contact && {
      contactName: optionalText("contact.contact_name", input.contact.contactName),
      email: optionalEmail("contact.email", input.contact.email),
      phoneNumber: optionalText("contact.phone_number", input.contact.phoneNumber),
    };
    // Read side by side (a back end may send both reads in one round trip).
    const [account, chatbot] = await Promise.all([
      accountForKey(this.d, input.clientApiKey),
      this.d.chatbots.byId(chatbotId),
    ]);
    if (!account || !chatbot || chatbot.accountId !== account.accountId || !chatbot.active)
      throw new UnknownCredentialError(BAD_KEY);
    const launchOrigin = input.launchCode ? embedOrigin(chatbot.allowedOrigins, input.embedOrigin ?? "") : undefined;
    if (this.d.admit) await this.d.admit(account.accountId);
    const marking = account.markUsed();
    if (marking) await marking;

    const now = this.d.clock.now();
    // Time-ordered: each new session's row goes at the end of the sessions' index (one page per commit, not one each).
    const sessionId = newTimeOrderedId(now);
    const refreshToken = newSecret(REFRESH_TOKEN_PREFIX);
    const refreshTokenExpiresAt = now + this.d.ttl.refresh * 1000;
    const launch = launchOrigin
      ? { code: newSecret(LAUNCH_CODE_PREFIX), expiresAt: now + LAUNCH_CODE_TTL_MS, origin: launchOrigin }
      : undefined;
    // Signed before anything is stored: a failure here leaves no row behind.
    const access = await this.d.jwt.signAccess(
      { accountId: account.accountId, chatbotId, userId, sessionId },
      this.d.ttl.access,
    );
    await this.d.transaction(
      async (tx) => {
        await tx.refreshTokens.insert({
          tokenHash: hashSecret(refreshToken),
          sessionId,
          accountId: account.accountId,
          chatbotId,
          userId,
          createdAt: now,
          expiresAt: refreshTokenExpiresAt,
          revokedAt: null,
          lastUsedAt: now,
          lastOrigin: "",
          userAgent: userAgentOf(input.userAgent) ?? "",
        });
        if (launch)
          await tx.launchCodes.insert({
            codeHash: hashSecret(launch.code),
            accountId: account.accountId,
            chatbotId,
            userId,
            sessionId,
            origin: launch.origin,
            createdAt: now,
            expiresAt: launch.expiresAt,
            usedAt: null,
          });
        await tx.contacts.ensure(account.accountId, userId, profile, now);
        // New rows and one upsert of the contact: concurrent first contacts wait for its row lock, none is aborted.
        // Only `tx` is called, and no event is appended: self-contained.
      },
      { rowLocks: true, selfContained: true },
    );
    return {
      accessToken: access.token,
      refreshToken,
      accessTokenExpiresAt: access.expiresAt,
      refreshTokenExpiresAt,
      sessionId,
      launchCode: launch,
    };
  }

  /**
   * An access token for a person of the account to try one of its chatbots (the console's preview): no API key and
   * no refresh token, for the account's own active chatbot only; the preview user shows in the inbox like a customer.
   */
  async previewAccessToken(input: {
    accountId: string;
    chatbotId: string;
    userId: string;
  }): Promise<{ accessToken: string; expiresAt: number }> {
    const chatbotId = requireUuid("chatbot_id", input.chatbotId);
    const userId = requireId("user_id", input.userId);
    const chatbot = await this.d.chatbots.byId(chatbotId);
    if (!chatbot || chatbot.accountId !== input.accountId || !chatbot.active)
      throw notFound("no such active chatbot in this account");
    // A session of its own (no refresh token stands behind it), so that like every access token it names its lineage.
    const access = await this.d.jwt.signAccess(
      { accountId: input.accountId, chatbotId, userId, sessionId: newId() },
      this.d.ttl.access,
    );
    await this.d.contacts.upsert(
      input.accountId,
      userId,
      { contactName: "Console preview", email: "", phoneNumber: "" },
      this.d.clock.now(),
    );
    return { accessToken: access.token, expiresAt: access.expiresAt };
  }
}
