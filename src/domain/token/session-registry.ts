import type { ChatbotRecord } from "../account/repository.js";
import type { AuditLog, AuditTx } from "../audit/audit-log.js";
import type { AccountCaller } from "../caller.js";
import type { Clock } from "../clock.js";
import { invalidArgument, notFound } from "../errors.js";
import { requireUuid } from "../ids.js";
import { page, requireId } from "../validate.js";
import type { RefreshTokenRecord, RefreshTokenRepository, SessionPolicyRecord } from "./repository.js";

/** Default and largest grace of a retired refresh token, seconds. */
export const DEFAULT_REUSE_GRACE_S = 30;
export const MAX_REUSE_GRACE_S = 300;

/** A session as the registry shows it: never the token. */
export interface SessionView {
  sessionId: string;
  chatbotId: string;
  userId: string;
  createdAt: number;
  lastUsedAt: number;
  lastOrigin: string;
  userAgent: string;
  expiresAt: number;
  revokedAt: number | null;
  status: "active" | "expired" | "revoked";
}

/** What the registry needs. */
export interface SessionRegistryDeps {
  refreshTokens: RefreshTokenRepository;
  clock: Clock;
  /** The account's chatbot; another account's (or a missing one) throws not_found. */
  chatbotOf(caller: AccountCaller, chatbotId: string): Promise<ChatbotRecord>;
  audit: AuditLog<AuditTx & { refreshTokens: RefreshTokenRepository }>;
}

/** The account's view of its customers' sessions: list, revoke one, and each chatbot's rotation policy. */
export class SessionRegistry {
  constructor(private readonly d: SessionRegistryDeps) {}

  /** A page of the account's sessions, newest first, narrowed to a chatbot and/or a user. */
  async list(
    caller: AccountCaller,
    q: { chatbotId?: string; userId?: string; limit?: number | undefined; offset?: number | undefined },
  ): Promise<{ sessions: SessionView[]; hasMore: boolean }> {
    const { limit, offset } = page(q.limit, q.offset, 20);
    // Another account's chatbot is not_found, like a missing one.
    const chatbotId = q.chatbotId ? (await this.d.chatbotOf(caller, q.chatbotId)).chatbotId : undefined;
    const userId = q.userId ? requireId("user_id", q.userId) : undefined;
    const rows = await this.d.refreshTokens.list({ accountId: caller.accountId, chatbotId, userId }, limit + 1, offset);
    return { sessions: rows.slice(0, limit).map((r) => this.view(r)), hasMore: rows.length > limit };
  }

  /** Ends one session of the account: its refresh token, and its live access tokens at once. */
  async revoke(caller: AccountCaller, sessionId: string): Promise<SessionView> {
    const id = requireUuid("session_id", sessionId);
    const rec = await this.d.refreshTokens.bySession(id);
    if (!rec || rec.accountId !== caller.accountId) throw notFound(`session ${id}`);
    const now = this.d.clock.now();
    await this.d.audit.within(caller, "session.revoked", id, (tx) =>
      tx.refreshTokens.revokeSession(caller.accountId, id, now),
    );
    return this.view((await this.d.refreshTokens.bySession(id)) ?? rec);
  }

  /** The chatbot's session policy (rotation off by default). */
  async policy(caller: AccountCaller, chatbotId: string): Promise<SessionPolicyRecord> {
    const c = await this.d.chatbotOf(caller, chatbotId);
    return (
      (await this.d.refreshTokens.policy(c.chatbotId)) ?? {
        chatbotId: c.chatbotId,
        rotate: false,
        reuseGraceMs: DEFAULT_REUSE_GRACE_S * 1000,
      }
    );
  }

  /** Turns rotation on or off for the chatbot's refresh tokens, with the grace of a retired one. */
  async setPolicy(
    caller: AccountCaller,
    chatbotId: string,
    rotate: boolean,
    graceSeconds: number | undefined,
  ): Promise<SessionPolicyRecord> {
    const c = await this.d.chatbotOf(caller, chatbotId);
    const grace = graceSeconds ?? DEFAULT_REUSE_GRACE_S;
    if (!Number.isInteger(grace) || grace < 0 || grace > MAX_REUSE_GRACE_S)
      throw invalidArgument("reuse_grace_seconds", `must be an integer from 0 to ${MAX_REUSE_GRACE_S}`);
    const p = { chatbotId: c.chatbotId, rotate, reuseGraceMs: grace * 1000 };
    await this.d.refreshTokens.setPolicy(p);
    return p;
  }

  private view(r: RefreshTokenRecord): SessionView {
    const now = this.d.clock.now();
    return {
      sessionId: r.sessionId,
      chatbotId: r.chatbotId,
      userId: r.userId,
      createdAt: r.createdAt,
      lastUsedAt: r.lastUsedAt,
      lastOrigin: r.lastOrigin,
      userAgent: r.userAgent,
      expiresAt: r.expiresAt,
      revokedAt: r.revokedAt,
      status: r.revokedAt !== null ? "revoked" : r.expiresAt <= now ? "expired" : "active",
    };
  }
}
