import { earlyRefreshDelayMs } from "./token-lifetime.js";

/** The window messages of the token refresh protocol (service.md §6). */
export const TOKEN_REFRESH = "[TOKEN_REFRESH]";
export const TOKEN_REFRESH_RESPONSE = "[TOKEN_REFRESH_RESPONSE]";
/** The documented reason: a call failed because the token expired. */
export const TOKEN_EXPIRED = "TokenExpiredError";
/** A call failed because a credential the token descends from was revoked: asked for anew like an expired one. */
export const TOKEN_REVOKED = "TokenRevokedError";
/** Whether a failure's reason is one the host page may cure with a new token. */
export function renewable(reason: string | undefined): boolean {
  return reason === TOKEN_EXPIRED || reason === TOKEN_REVOKED;
}
/** Added beside it: the token is still valid but most of its lifetime has passed. */
export const TOKEN_EXPIRING_SOON = "TokenExpiringSoon";

const MAX_TOKEN_CHARS = 4096;
const MAX_REQUEST_ID_CHARS = 64;

/** A random id (crypto.randomUUID needs a secure context; getRandomValues does not). */
function newRequestId(): string {
  return Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * Asks the host page for a new access token: ahead of expiry (TokenExpiringSoon, with a request id) and, as the
 * documented fallback, after a call failed (TokenExpiredError, exactly as service.md §6 describes it).
 * Only the parent window, at the host's origin, is asked and believed; the token is kept in memory by the caller.
 */
export class TokenRefresher {
  private pending: { resolve: (token: string | null) => void; timer: number } | undefined;
  private pendingPromise: Promise<string | null> | undefined;
  /** The early question waiting for its answer, if any. */
  private early: { requestId: string; timer: number } | undefined;
  /** The timer of the next early question. */
  private planned: number | undefined;

  constructor(
    /** The host page's origin, or undefined when it is not known (then no refresh is possible). */
    private readonly hostOrigin: string | undefined,
    private readonly timeoutMs: number,
    /** Called with every accepted token, asked for or not. */
    private readonly onToken: (token: string) => void,
  ) {
    window.addEventListener("message", (event) => this.receive(event));
  }

  /** Whether a host page that can be asked exists. */
  get canRefresh(): boolean {
    return this.hostOrigin !== undefined && window.parent !== window;
  }

  /**
   * Plans the early question for a token the frame has just started to use. Each new token replaces the plan; a token
   * whose lifetime cannot be read gets none (the documented reactive refresh still covers it).
   */
  plan(token: string): void {
    window.clearTimeout(this.planned);
    this.planned = undefined;
    if (!this.canRefresh) return;
    const delay = earlyRefreshDelayMs(token, Date.now(), Math.random());
    if (delay === undefined) return;
    this.planned = window.setTimeout(() => this.askEarly(), delay);
  }

  /** Posts the documented [TOKEN_REFRESH] to the parent; resolves with the new token, or null when none came in time. */
  request(): Promise<string | null> {
    if (!this.canRefresh) return Promise.resolve(null);
    // One question at a time: concurrent failed calls share the same answer.
    if (this.pendingPromise) return this.pendingPromise;
    this.pendingPromise = new Promise<string | null>((resolve) => {
      const timer = window.setTimeout(() => this.settle(null), this.timeoutMs);
      this.pending = { resolve, timer };
      window.parent.postMessage({ type: TOKEN_REFRESH, reason: TOKEN_EXPIRED }, this.hostOrigin!);
    });
    return this.pendingPromise;
  }

  /** Asks ahead of expiry. No answer changes nothing: the token still works, and its expiry is handled as documented. */
  private askEarly(): void {
    this.planned = undefined;
    if (this.early || this.pending) return;
    const requestId = newRequestId();
    const timer = window.setTimeout(() => {
      if (this.early?.requestId === requestId) this.early = undefined;
    }, this.timeoutMs);
    this.early = { requestId, timer };
    window.parent.postMessage(
      { type: TOKEN_REFRESH, reason: TOKEN_EXPIRING_SOON, request_id: requestId },
      this.hostOrigin!,
    );
  }

  private receive(event: MessageEvent): void {
    // Anything not from our parent at the host's origin is ignored, whatever it says.
    if (this.hostOrigin === undefined || event.source !== window.parent || event.origin !== this.hostOrigin) return;
    const data: unknown = event.data;
    if (typeof data !== "object" || data === null) return;
    const {
      type,
      access_token: token,
      request_id: requestId,
    } = data as { type?: unknown; access_token?: unknown; request_id?: unknown };
    // Unknown types (and later additions) are ignored.
    if (type !== TOKEN_REFRESH_RESPONSE || typeof token !== "string" || token === "" || token.length > MAX_TOKEN_CHARS)
      return;
    if (requestId !== undefined && (typeof requestId !== "string" || requestId.length > MAX_REQUEST_ID_CHARS)) return;
    // Any token from the host page is taken, as documented; one naming the early question answers it.
    if (this.early && (requestId === undefined || requestId === this.early.requestId)) {
      window.clearTimeout(this.early.timer);
      this.early = undefined;
    }
    this.onToken(token);
    this.plan(token);
    this.settle(token);
  }

  private settle(token: string | null): void {
    const p = this.pending;
    this.pending = undefined;
    this.pendingPromise = undefined;
    if (!p) return;
    window.clearTimeout(p.timer);
    p.resolve(token);
  }
}
