import { DomainError } from "../domain/errors.js";
import { addressKey } from "./rate-limit.js";

/** The caps of open watch streams (configuration: AIAGENT_WATCH_STREAMS*). */
export interface WatchCaps {
  perInstance: number;
  perAccount: number;
  perAddress: number;
  perToken: number;
}

/** Who holds a stream: its token (any stable key of it), its account and its client address. */
export interface StreamHolder {
  token: string;
  account: string;
  address: string;
}

/**
 * Bounds the open watch streams: per token (one customer's tabs, one inbox), per account and per client address (so
 * one tenant, or one host, at its cap leaves the others' inboxes and frames their share), and per instance (memory
 * and sockets). A stream holds its slots until it ends; `admit` answers resource_exhausted when one is full.
 */
export class WatchLimits {
  private total = 0;
  private readonly held = {
    token: new Map<string, number>(),
    account: new Map<string, number>(),
    address: new Map<string, number>(),
  };

  constructor(private readonly caps: WatchCaps) {}

  /** Takes a slot for the holder; the returned function gives it back, once. */
  admit(h: StreamHolder): () => void {
    const keys = { token: h.token, account: h.account, address: addressKey(h.address) };
    if ((this.held.token.get(keys.token) ?? 0) >= this.caps.perToken)
      throw new DomainError(
        "resource_exhausted",
        `at most ${this.caps.perToken} watch streams may be open with one token; close one first`,
      );
    if ((this.held.account.get(keys.account) ?? 0) >= this.caps.perAccount)
      throw new DomainError(
        "resource_exhausted",
        `this account has ${this.caps.perAccount} watch streams open on this server, its share; close one first`,
        { retryAfterSeconds: 5 },
      );
    if ((this.held.address.get(keys.address) ?? 0) >= this.caps.perAddress)
      throw new DomainError(
        "resource_exhausted",
        `this client address has ${this.caps.perAddress} watch streams open on this server, its share; close one first`,
        { retryAfterSeconds: 5 },
      );
    if (this.total >= this.caps.perInstance)
      throw new DomainError("resource_exhausted", "too many watch streams are open on this server; retry later", {
        retryAfterSeconds: 5,
      });
    this.total++;
    for (const k of ["token", "account", "address"] as const) bump(this.held[k], keys[k], 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.total--;
      for (const k of ["token", "account", "address"] as const) bump(this.held[k], keys[k], -1);
    };
  }

  /** Streams open now. */
  get open(): number {
    return this.total;
  }
}

function bump(m: Map<string, number>, key: string, by: number): void {
  const n = (m.get(key) ?? 0) + by;
  if (n <= 0) m.delete(key);
  else m.set(key, n);
}
