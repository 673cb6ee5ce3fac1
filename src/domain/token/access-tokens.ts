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
  MAX_API_KEY,
  markKeyUsed,
  REFRESH_TOKEN_PREFIX,
  REVOKED_KEY,
  type TokenServiceDeps,
  UnknownCredentialError,
  userAgentOf,
} from "./credentials.js";
import type { RefreshTokenRecord } from "./repository.js";

/** At most this many API keys' accounts are remembered (the oldest remembered is forgotten first). */
const MAX_KNOWN_KEYS = 10_000;

/** An API key seen valid here: its account (a key never changes account) and its id (to forget it by). */
interface KnownKey {
  accountId: string;
  apiKeyId: string;
}

/** Issuing the frame's tokens: an API key traded for a session (and a launch code), and the console's preview. */
export class AccessTokens {
  /**
   * API keys this instance has seen valid, by hash: an issue with one of them is one call of `issueSession` (one
   * round trip on PostgreSQL), the key's liveness, its account's `active` and the chatbot checked in it; its
   * per-account limit (`admit`) is then counted before that check, and handed back when it refuses. Forgotten on a
   * refusal, and when a change of the key or its account is heard (`credentialsChanged`).
   */
  private readonly known = new Map<string, KnownKey>();

  constructor(
    private readonly d: Pick<
      TokenServiceDeps,
      | "accounts"
      | "admit"
      | "admitRefused"
      | "apiKeys"
      | "chatbots"
      | "clock"
      | "contacts"
      | "issueSession"
      | "jwt"
      | "transaction"
      | "ttl"
    >,
  ) {}

  /**
   * Told the subjects of credential changes this instance heard of (credential-changes.ts): the keys named, and
   * every key of an account named, are forgotten (their next issue reads the key first again); every key when
   * undefined (any may have changed).
   */
  credentialsChanged(subjects: readonly string[] | undefined): void {
    if (this.known.size === 0) return;
    if (subjects === undefined) {
      this.known.clear();
      return;
    }
    let keys: Set<string> | undefined;
    let accounts: Set<string> | undefined;
    for (const s of subjects)
      if (s.startsWith("apikey:")) (keys ??= new Set()).add(s.slice(7));
      else if (s.startsWith("account:")) (accounts ??= new Set()).add(s.slice(8));
    if (!keys && !accounts) return;
    for (const [hash, k] of this.known)
      if (keys?.has(k.apiKeyId) || accounts?.has(k.accountId)) this.known.delete(hash);
  }

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
    const keyHash = input.clientApiKey.length > MAX_API_KEY ? "" : hashSecret(input.clientApiKey);
    // A key seen valid: the store's one call checks it, the chatbot and a launch code's origin, and writes it all.
    const known = this.d.issueSession ? this.known.get(keyHash) : undefined;
    if (known)
      return this.issueKnown(known, keyHash, chatbotId, userId, input.userAgent, {
        profile: hasProfile(profile) ? profile : undefined,
        embedOrigin: input.launchCode ? (input.embedOrigin ?? "") : undefined,
      });
    // Read side by side (a back end may send both reads in one round trip).
    const [account, chatbot] = await Promise.all([
      accountForKey(this.d, input.clientApiKey, keyHash),
      this.d.chatbots.byId(chatbotId),
    ]);
    if (!account || !chatbot || chatbot.accountId !== account.accountId || !chatbot.active)
      throw new UnknownCredentialError(BAD_KEY);
    const launchOrigin = input.launchCode ? embedOrigin(chatbot.allowedOrigins, input.embedOrigin ?? "") : undefined;
    if (this.d.admit) await this.d.admit(account.accountId);
    const marking = account.markUsed();
    if (marking) await marking;

    const now = this.d.clock.now();
    const { refreshToken, session } = this.newSession(account.accountId, chatbotId, userId, input.userAgent, now);
    const { sessionId, expiresAt: refreshTokenExpiresAt } = session;
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
        await tx.refreshTokens.insert(session);
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
    this.remember(keyHash, { accountId: account.accountId, apiKeyId: account.apiKeyId });
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
   * An issue with a key seen valid: the account's limit counted first, then the key, its account and the chatbot
   * checked and the session written in one call of the store (nothing written when refused, and the count handed
   * back). Revocation still holds at the next call: the check runs in that call, on the store's current state.
   */
  private async issueKnown(
    known: KnownKey,
    keyHash: string,
    chatbotId: string,
    userId: string,
    userAgent: string | undefined,
    more: { profile: ContactProfile | undefined; embedOrigin: string | undefined },
  ): Promise<IssuedTokens> {
    const { accountId } = known;
    if (this.d.admit) await this.d.admit(accountId);
    const now = this.d.clock.now();
    const { refreshToken, session } = this.newSession(accountId, chatbotId, userId, userAgent, now);
    const { sessionId } = session;
    const code = more.embedOrigin === undefined ? undefined : newSecret(LAUNCH_CODE_PREFIX);
    const codeExpiresAt = now + LAUNCH_CODE_TTL_MS;
    // Signed before anything is stored: a failure here leaves no row behind (and the count stands, as on the
    // other path).
    const access = await this.d.jwt.signAccess({ accountId, chatbotId, userId, sessionId }, this.d.ttl.access);
    const done = await this.d.issueSession!({
      keyHash,
      token: session,
      launch: code
        ? { codeHash: hashSecret(code), expiresAt: codeExpiresAt, embedOrigin: more.embedOrigin! }
        : undefined,
      profile: more.profile,
    });
    if (!done.issued) {
      await this.d.admitRefused?.(accountId);
      // The key and chatbot passed, the origin asked did not: embedOrigin says why (the key stays known).
      if (done.allowedOrigins) embedOrigin(done.allowedOrigins, more.embedOrigin ?? "");
      this.known.delete(keyHash);
      throw done.revoked
        ? new UnknownCredentialError(REVOKED_KEY, "TokenRevokedError")
        : new UnknownCredentialError(BAD_KEY);
    }
    // The key's last use, to the minute (advisory, as accountForKey's markUsed).
    const marking = markKeyUsed(this.d, done.apiKeyId, done.keyLastUsedAt, now);
    if (marking) await marking;
    return {
      accessToken: access.token,
      refreshToken,
      accessTokenExpiresAt: access.expiresAt,
      refreshTokenExpiresAt: session.expiresAt,
      sessionId,
      launchCode:
        code && done.launchOrigin !== undefined
          ? { code, expiresAt: codeExpiresAt, origin: done.launchOrigin }
          : undefined,
    };
  }

  /** A new session of (account, chatbot, user) at `now`: its refresh token, and the row that stores it. */
  private newSession(
    accountId: string,
    chatbotId: string,
    userId: string,
    userAgent: string | undefined,
    now: number,
  ): { refreshToken: string; session: RefreshTokenRecord } {
    const refreshToken = newSecret(REFRESH_TOKEN_PREFIX);
    const session: RefreshTokenRecord = {
      tokenHash: hashSecret(refreshToken),
      // Time-ordered: each new session's row goes at the end of the sessions' index (one page per commit, not one
      // each).
      sessionId: newTimeOrderedId(now),
      accountId,
      chatbotId,
      userId,
      createdAt: now,
      expiresAt: now + this.d.ttl.refresh * 1000,
      revokedAt: null,
      lastUsedAt: now,
      lastOrigin: "",
      userAgent: userAgentOf(userAgent) ?? "",
    };
    return { refreshToken, session };
  }

  /** Whether an issue with this key takes the one-call path: a key seen valid here and not forgotten since. */
  knowsKey(clientApiKey: string): boolean {
    return this.known.has(hashSecret(clientApiKey));
  }

  private remember(keyHash: string, k: KnownKey): void {
    if (!this.d.issueSession || this.known.has(keyHash)) return;
    if (this.known.size >= MAX_KNOWN_KEYS) this.known.delete(this.known.keys().next().value!);
    this.known.set(keyHash, k);
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

/** Whether a contact profile names any field (with none, there is nothing to fold into the stored contact). */
function hasProfile(p: ContactProfile | undefined): boolean {
  return p !== undefined && (p.contactName !== "" || p.email !== "" || p.phoneNumber !== "");
}
