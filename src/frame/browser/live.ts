import {
  ApiError,
  type ChatMessage,
  type ConversationState,
  type FrameApi,
  SessionExpiredError,
  type TypingState,
} from "./api.js";
import { renewable } from "./token-refresh.js";

/** What the frame does with live updates. */
export interface LiveHandlers {
  onConversation(c: ConversationState): void;
  onMessage(m: ChatMessage): void;
  onTyping(t: TypingState): void;
  /** The agent looks something up for a reply no send of this frame carries (its looking-up line). */
  onActivity?(activity: string): void;
  /** The session ended (no new token from the host page). */
  onSessionExpired(e: SessionExpiredError): void;
}

/** Timings of the live connection; tests may shorten them. */
export interface LiveTimings {
  /** A stream whose first event takes longer is taken as buffered by a proxy: polling takes over. */
  firstEventMs: number;
  /** Reconnect delays grow from this… */
  retryMinMs: number;
  /** …to this. */
  retryMaxMs: number;
  /** Polling starts this often and slows to retryMaxMs while nothing changes. */
  pollMinMs: number;
}

export const DEFAULT_TIMINGS: LiveTimings = {
  firstEventMs: 5000,
  retryMinMs: 500,
  retryMaxMs: 30_000,
  pollMinMs: 2000,
};

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const t = setTimeout(resolve, ms);
    signal.addEventListener(
      "abort",
      () => {
        clearTimeout(t);
        resolve();
      },
      { once: true },
    );
  });

/**
 * Keeps the frame up to date with one conversation: a watch stream resumed from the last message_order after
 * every interruption (server restart, token expiry: a fresh token is asked for first), with back-off; when a
 * stream cannot be held (its first event does not arrive in time: a proxy that buffers) it falls back to polling,
 * which slows down while nothing changes.
 */
export class LiveUpdates {
  private stop: AbortController | undefined;
  private last = 0;
  private conversationId: string | undefined;
  private running = false;
  /** "stream" until streams prove unusable, then "poll". */
  mode: "stream" | "poll" = "stream";

  constructor(
    private readonly api: FrameApi,
    private readonly h: LiveHandlers,
    private readonly timings: LiveTimings = DEFAULT_TIMINGS,
  ) {}

  /** Follows the conversation from after `afterOrder` (stops following any other). */
  follow(conversationId: string, afterOrder: number): void {
    this.stop?.abort();
    const stop = new AbortController();
    this.stop = stop;
    this.last = afterOrder;
    this.conversationId = conversationId;
    void this.run(conversationId, stop.signal);
  }

  /** Follows again from the last message seen, if it stopped (the session had expired and now has a token). */
  resume(): void {
    if (this.running || this.conversationId === undefined) return;
    this.follow(this.conversationId, this.last);
  }

  /** Polls at once (after the user sent something while polling). */
  nudge(): void {
    this.poke?.();
  }

  private poke: (() => void) | undefined;

  // A method, so the compiler does not narrow `mode` across the awaits that change it.
  private polling(): boolean {
    return this.mode === "poll";
  }

  private seen(m: ChatMessage): void {
    if (m.message_order > this.last) this.last = m.message_order;
    this.h.onMessage(m);
  }

  private async run(conversationId: string, signal: AbortSignal): Promise<void> {
    this.running = true;
    try {
      await this.loop(conversationId, signal);
    } finally {
      if (!signal.aborted) this.running = false;
    }
  }

  private async loop(conversationId: string, signal: AbortSignal): Promise<void> {
    let failures = 0;
    while (!signal.aborted && this.mode === "stream") {
      let received = false;
      const attempt = new AbortController();
      const abortAttempt = () => attempt.abort();
      signal.addEventListener("abort", abortAttempt, { once: true });
      const buffered = setTimeout(() => {
        if (!received) {
          this.mode = "poll";
          attempt.abort();
        }
      }, this.timings.firstEventMs);
      try {
        await this.api.watch(
          conversationId,
          this.last,
          {
            onConversation: (c) => {
              received = true;
              this.h.onConversation(c);
            },
            onMessage: (m) => {
              received = true;
              this.seen(m);
            },
            onTyping: (t) => this.h.onTyping(t),
            onActivity: (x) => this.h.onActivity?.(x),
          },
          attempt.signal,
        );
        // Ended by the server (shutdown, restart): resume at once.
        failures = 0;
      } catch (e) {
        if (signal.aborted || this.polling()) break;
        if (e instanceof SessionExpiredError) {
          this.h.onSessionExpired(e);
          return;
        }
        if (e instanceof ApiError && renewable(e.reason)) {
          // The stream outlived its token: ask the host page for a new one and resume.
          if (await this.api.renewToken()) continue;
          this.h.onSessionExpired(new SessionExpiredError("your session has expired"));
          return;
        }
        // Unreachable or cut: retry with back-off (polling could not reach it either).
        failures = received ? 1 : failures + 1;
      } finally {
        clearTimeout(buffered);
        signal.removeEventListener("abort", abortAttempt);
      }
      if (this.polling()) break;
      const delay =
        failures === 0 ? 0 : Math.min(this.timings.retryMaxMs, this.timings.retryMinMs * 2 ** (failures - 1));
      if (delay > 0) await sleep(delay, signal);
    }
    if (!signal.aborted && this.polling()) await this.poll(conversationId, signal);
  }

  private async poll(conversationId: string, signal: AbortSignal): Promise<void> {
    let delay = this.timings.pollMinMs;
    let state = "";
    while (!signal.aborted) {
      let changed = false;
      try {
        const c = (await this.api.conversations()).find((x) => x.conversation_id === conversationId);
        const key = c ? `${c.status}|${c.assigned_to}|${c.operator_name ?? ""}` : "";
        if (c && key !== state) {
          state = key;
          changed = true;
          this.h.onConversation(c);
        }
        for (;;) {
          const p = await this.api.messages(conversationId, this.last, 100);
          for (const m of p.messages) this.seen(m);
          if (p.messages.length > 0) changed = true;
          if (!p.hasMore || p.messages.length === 0) break;
        }
      } catch (e) {
        if (e instanceof SessionExpiredError) {
          this.h.onSessionExpired(e);
          return;
        }
      }
      delay = changed ? this.timings.pollMinMs : Math.min(this.timings.retryMaxMs, Math.round(delay * 1.5));
      await new Promise<void>((resolve) => {
        this.poke = resolve;
        void sleep(delay, signal).then(resolve);
      });
      this.poke = undefined;
    }
  }
}
