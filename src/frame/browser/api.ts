import { ndjson } from "./ndjson.js";
import { renewable, type TokenRefresher } from "./token-refresh.js";

/** A message as the service returns it. */
export interface ChatMessage {
  message_id: string;
  conversation_id: string;
  content: string;
  created_at: string;
  message_order: number;
  role?: string;
  tool_calls?: string;
  documents?: { title: string; url: string; snippet?: string }[];
  /** Files sent with it; `url` is a path of the service. */
  attachments?: { name: string; content_type: string; url: string }[];
}

/** A conversation's state as the service returns it. */
export interface ConversationState {
  conversation_id: string;
  status: string;
  assigned_to: string;
  operator_name?: string;
  rating?: { score: number; comment: string; rated_at: string };
  /** A path of the service, answered as the operator's picture (or 404 when they set none). */
  operator_picture_url?: string;
}

/** Someone is typing (an operator, for the frame), for `expires_in_ms` unless told again. */
export interface TypingState {
  name: string;
  expires_in_ms: number;
}

/** What a watch stream reports. */
export interface WatchHandlers {
  onConversation(c: ConversationState): void;
  onMessage(m: ChatMessage): void;
  onTyping(t: TypingState): void;
  /** The agent looks something up for a reply no send of this frame carries (after a person's decision). */
  onActivity?(activity: string): void;
}

/** An error answered by the service (Connect error JSON), or a failure to reach it. */
export class ApiError extends Error {
  override readonly name = "ApiError";
  constructor(
    message: string,
    /** Connect code, or "network" when the service could not be reached. */
    readonly code: string,
    /** The machine-readable reason of a token failure (TokenExpiredError, TokenInvalidError), if any. */
    readonly reason: string | undefined,
  ) {
    super(message);
  }
}

/** The token expired and the host page gave no new one. */
export class SessionExpiredError extends Error {
  override readonly name = "SessionExpiredError";
}

interface ErrorBody {
  code?: string;
  message?: string;
  details?: { debug?: { reason?: string } }[];
}

function toApiError(body: ErrorBody | undefined, status: number): ApiError {
  const reason = body?.details?.map((d) => d.debug?.reason).find((r) => typeof r === "string");
  return new ApiError(body?.message ?? `the service answered HTTP ${status}`, body?.code ?? "unknown", reason);
}

/** One streamed send, as it happens. */
export interface SendHandlers {
  onUserMessage(m: ChatMessage): void;
  onDelta(text: string): void;
  /** The agent runs tool calls (`looking_up`); the next text or the reply clears it. */
  onActivity?(activity: string): void;
  onReply(m: ChatMessage): void;
}

/** The frame's calls to the service; the access token lives here, in memory only. */
export class FrameApi {
  constructor(
    private readonly base: string,
    private token: string,
    private readonly refresher: TokenRefresher,
  ) {}

  /** Replaces the token (a host page may push one at any time). */
  setToken(token: string): void {
    this.token = token;
  }

  /**
   * Exchanges the launch code of the frame's address, once, for the access token this object then keeps; the embedding
   * page's origin goes with it, and the service refuses the code anywhere else.
   */
  async launch(chatbotId: string, launchCode: string, embedOrigin: string): Promise<string> {
    const r = await this.fetch("/ai_agent/launch", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ chatbot_id: chatbotId, launch_code: launchCode, embed_origin: embedOrigin }),
    });
    const body = (await r.json().catch(() => undefined)) as { data?: { access_token?: string } } | undefined;
    if (!r.ok || typeof body?.data?.access_token !== "string")
      throw toApiError(body as ErrorBody | undefined, r.status);
    this.token = body.data.access_token;
    return this.token;
  }

  /** A JSON call of the service with the token in the query (the e-mail prompt's routes, files, ratings); its answer's body. */
  call(method: string, path: string, body?: unknown): Promise<unknown> {
    return this.withToken(async (t) => {
      const init: RequestInit = body === undefined ? { method } : { method, body: JSON.stringify(body) };
      if (body !== undefined) init.headers = { "content-type": "application/json" };
      return this.json(init, `${path}?${q({ access_token: t })}`);
    });
  }

  /** The frame user's conversations, newest first. */
  async conversations(): Promise<ConversationState[]> {
    const body = await this.withToken((t) => this.json("GET", `/ai_agent/conversations?${q({ access_token: t })}`));
    return (body as { data?: { conversations?: ConversationState[] } }).data?.conversations ?? [];
  }

  /**
   * Follows a conversation until the stream ends (resolves) or fails (throws ApiError; a token that expired
   * mid-stream has reason TokenExpiredError). `signal` stops it.
   */
  async watch(conversationId: string, after: number, h: WatchHandlers, signal: AbortSignal): Promise<void> {
    let used = "";
    const res = await this.withToken(async (t) => {
      used = t;
      // The token in the Authorization header, not the URL: the stream is the longest-lived request, the one most
      // likely written to a proxy's log (docs/live-updates.md, "Server-sent events, and why the frame reads NDJSON").
      const r = await this.fetch(
        `/watch_conversation?${q({ conversation_id: conversationId, after_message_order: String(after) })}`,
        { method: "GET", signal, headers: { authorization: `Bearer ${t}` } },
      );
      if (!r.ok || !r.body) throw toApiError(await r.json().catch(() => undefined), r.status);
      return r;
    });
    try {
      for await (const line of ndjson(res.body!)) {
        const l = line as {
          result?: { conversation?: ConversationState; message?: ChatMessage; typing?: TypingState; activity?: string };
          error?: ErrorBody;
        };
        if (l.error) {
          const err = toApiError(l.error, 200);
          // The stream outlived a token the frame has already replaced (refreshed ahead of expiry): it just ends, and
          // is resumed with the new token without asking the host page again.
          if (renewable(err.reason) && this.token !== used) return;
          throw err;
        }
        if (l.result?.conversation) h.onConversation(l.result.conversation);
        else if (l.result?.message) h.onMessage(l.result.message);
        else if (l.result?.typing) h.onTyping(l.result.typing);
        else if (typeof l.result?.activity === "string") h.onActivity?.(l.result.activity);
      }
    } catch (e) {
      if (e instanceof ApiError) throw e;
      throw new ApiError("the live connection was lost", "network", undefined);
    }
  }

  /** Tells the support team the customer is typing; best effort (a lost signal only leaves an indicator unshown). */
  typing(conversationId: string): void {
    const path = `/send_typing?${q({ access_token: this.token })}`;
    void this.fetch(path, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ conversation_id: conversationId }),
    }).catch(() => undefined);
  }

  /** The operator's picture's address on the service. */
  url(path: string): string {
    return this.base + path;
  }

  /** Asks the host page for a fresh token (after a stream ended on expiry); false when none came. */
  async renewToken(): Promise<boolean> {
    const fresh = await this.refresher.request();
    if (fresh === null) return false;
    this.token = fresh;
    return true;
  }

  /** One page of a conversation's messages. */
  async messages(
    conversationId: string,
    offset: number,
    limit: number,
  ): Promise<{ messages: ChatMessage[]; hasMore: boolean }> {
    const body = (await this.withToken((t) =>
      this.json(
        "GET",
        `/get_messages_for_conversation?${q({ conversation_id: conversationId, limit: String(limit), offset: String(offset), access_token: t })}`,
      ),
    )) as {
      messages?: ChatMessage[];
      has_more?: boolean;
    };
    return { messages: body.messages ?? [], hasMore: body.has_more === true };
  }

  /** Sends a message and reports the stream's events; an error after the user's message was stored is thrown as is. */
  async send(
    conversationId: string | undefined,
    content: string,
    h: SendHandlers,
    idempotency_key: string = crypto.randomUUID(),
  ): Promise<void> {
    // One key per message the user sends: a retry after a lost answer stores nothing twice (the service replays),
    // and the same key again after the agent failed asks for the answer to the message already stored.
    const payload = JSON.stringify(
      conversationId ? { conversation_id: conversationId, content, idempotency_key } : { content, idempotency_key },
    );
    const open = () =>
      this.withToken(async (t) => {
        const r = await this.fetch(`/ai_agent/send_message_stream?${q({ access_token: t })}`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: payload,
        });
        if (!r.ok || !r.body) throw toApiError(await r.json().catch(() => undefined), r.status);
        return r;
      });
    // Opening the stream is retried (after a refresh, a cut connection or a 503) with the same key.
    let res: Response | undefined;
    for (let attempt = 0; !res; attempt++) {
      try {
        res = await open();
      } catch (e) {
        const lost = e instanceof ApiError && (e.code === "network" || e.code === "unavailable");
        if (!lost || attempt >= 2) throw e;
        await new Promise((r) => setTimeout(r, 500 * 2 ** attempt));
      }
    }
    try {
      for await (const line of ndjson(res.body!)) {
        const l = line as {
          result?: { user_message?: ChatMessage; delta?: string; activity?: string; reply?: ChatMessage };
          error?: ErrorBody;
        };
        if (l.error) throw toApiError(l.error, 200);
        if (l.result?.user_message) h.onUserMessage(l.result.user_message);
        else if (typeof l.result?.delta === "string") h.onDelta(l.result.delta);
        else if (typeof l.result?.activity === "string") h.onActivity?.(l.result.activity);
        else if (l.result?.reply) h.onReply(l.result.reply);
      }
    } catch (e) {
      if (e instanceof ApiError) throw e;
      throw new ApiError("the connection was lost while the reply was being written", "network", undefined);
    }
  }

  /** Runs a call; if the token has expired, asks the host page for a new one and runs it once more. */
  private async withToken<T>(call: (token: string) => Promise<T>): Promise<T> {
    const used = this.token;
    try {
      return await call(used);
    } catch (e) {
      if (!(e instanceof ApiError) || !renewable(e.reason)) throw e;
    }
    // Another call may have refreshed meanwhile; otherwise ask the host page.
    const fresh = this.token !== used ? this.token : await this.refresher.request();
    if (fresh === null) throw new SessionExpiredError("your session has expired");
    this.token = fresh;
    try {
      return await call(fresh);
    } catch (e) {
      if (e instanceof ApiError && renewable(e.reason)) throw new SessionExpiredError("your session has expired");
      throw e;
    }
  }

  private async json(method: string | RequestInit, path: string): Promise<unknown> {
    const r = await this.fetch(path, typeof method === "string" ? { method } : method);
    const body: unknown = await r.json().catch(() => undefined);
    if (!r.ok) throw toApiError(body as ErrorBody | undefined, r.status);
    return body;
  }

  private async fetch(path: string, init: RequestInit): Promise<Response> {
    try {
      // No credentials and no referrer: the token travels only in the query (the watch stream: the Authorization header).
      return await fetch(this.base + path, {
        ...init,
        credentials: "omit",
        referrerPolicy: "no-referrer",
        cache: "no-store",
      });
    } catch {
      throw new ApiError("the chat service could not be reached", "network", undefined);
    }
  }
}

function q(params: Record<string, string>): string {
  return new URLSearchParams(params).toString();
}
