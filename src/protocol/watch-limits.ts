import { DomainError } from "../domain/errors.js";

/**
 * Bounds the open watch streams: per token (one customer's tabs, one inbox) and per instance (memory and
 * sockets). A stream holds its slot until it ends; `admit` answers resource_exhausted when none is free.
 */
export class WatchLimits {
  private total = 0;
  private readonly perToken = new Map<string, number>();

  constructor(
    private readonly maxPerInstance: number,
    private readonly maxPerToken: number,
  ) {}

  /** Takes a slot for the token (any stable key of it); the returned function gives it back, once. */
  admit(tokenKey: string): () => void {
    const held = this.perToken.get(tokenKey) ?? 0;
    if (held >= this.maxPerToken)
      throw new DomainError(
        "resource_exhausted",
        `at most ${this.maxPerToken} watch streams may be open with one token; close one first`,
      );
    if (this.total >= this.maxPerInstance)
      throw new DomainError("resource_exhausted", "too many watch streams are open on this server; retry later", {
        retryAfterSeconds: 5,
      });
    this.total++;
    this.perToken.set(tokenKey, held + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.total--;
      const n = (this.perToken.get(tokenKey) ?? 1) - 1;
      if (n === 0) this.perToken.delete(tokenKey);
      else this.perToken.set(tokenKey, n);
    };
  }

  /** Streams open now. */
  get open(): number {
    return this.total;
  }
}
