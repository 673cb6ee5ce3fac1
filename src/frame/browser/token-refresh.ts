/** The window messages of the token refresh protocol (service.md §6). */
export const TOKEN_REFRESH = "[TOKEN_REFRESH]";
export const TOKEN_REFRESH_RESPONSE = "[TOKEN_REFRESH_RESPONSE]";

const MAX_TOKEN_CHARS = 4096;

/**
 * Asks the host page for a new access token and waits for its answer.
 * Only the parent window, at the host's origin, is asked and believed; the token is kept in memory by the caller.
 */
export class TokenRefresher {
  private pending: { resolve: (token: string | null) => void; timer: number } | undefined;
  private pendingPromise: Promise<string | null> | undefined;

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

  /** Posts [TOKEN_REFRESH] to the parent; resolves with the new token, or null when none came in time. */
  request(): Promise<string | null> {
    if (!this.canRefresh) return Promise.resolve(null);
    // One question at a time: concurrent failed calls share the same answer.
    if (this.pendingPromise) return this.pendingPromise;
    this.pendingPromise = new Promise<string | null>((resolve) => {
      const timer = window.setTimeout(() => this.settle(null), this.timeoutMs);
      this.pending = { resolve, timer };
      window.parent.postMessage({ type: TOKEN_REFRESH, reason: "TokenExpiredError" }, this.hostOrigin!);
    });
    return this.pendingPromise;
  }

  private receive(event: MessageEvent): void {
    // Anything not from our parent at the host's origin is ignored, whatever it says.
    if (this.hostOrigin === undefined || event.source !== window.parent || event.origin !== this.hostOrigin) return;
    const data: unknown = event.data;
    if (typeof data !== "object" || data === null) return;
    const { type, access_token: token } = data as { type?: unknown; access_token?: unknown };
    if (type !== TOKEN_REFRESH_RESPONSE || typeof token !== "string" || token === "" || token.length > MAX_TOKEN_CHARS)
      return;
    this.onToken(token);
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
