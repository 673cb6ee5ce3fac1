import { DomainError } from "../domain/errors.js";
import { addressKey } from "./rate-limit.js";

/** The caps of open watch streams (configuration: AIAGENT_WATCH_STREAMS*, AIAGENT_WATCH_FRAME_STREAMS*). */
export interface WatchCaps {
  /** Every stream of the instance, frames and the team's together. */
  perInstance: number;
  /** The frames' share of the instance: the rest is kept for the team's (console) streams. */
  framesPerInstance: number;
  /** The team's streams per account (its console inboxes and conversations). */
  perAccount: number;
  /** The frames' streams per account (its visitors). */
  framesPerAccount: number;
  /** Per client address, each kind counted on its own. */
  perAddress: number;
  /** A frame customer's (chatbot, user) streams, whatever tokens they hold (tabs). */
  perCustomer: number;
  perToken: number;
}

/** Who holds a stream: its kind, its token (any stable key of it), its account, client address and customer. */
export interface StreamHolder {
  /** "frame": a customer's access token; "team": a person of the account (ID token or the console's session). */
  kind: "frame" | "team";
  token: string;
  account: string;
  address: string;
  /** The frame customer (chatbot and user); "" for the team's. */
  customer: string;
}

type Counter = "token" | "account" | "address" | "customer";

/**
 * Bounds the open watch streams: per token (one customer's tabs, one inbox), per frame customer, per account and
 * per client address (so one tenant, or one host, at its cap leaves the others' inboxes and frames their share),
 * and per instance (memory and sockets). Frames and the team's streams draw on separate shares of the account, of
 * the address and of the instance (the frames' share of it is smaller than the whole): however many visitors open
 * frames, an account's team can still open its inboxes. A stream holds its slots until it ends; `admit` answers
 * resource_exhausted when one is full.
 */
export class WatchLimits {
  private total = 0;
  private frames = 0;
  private readonly held = new Map<string, number>();

  constructor(private readonly caps: WatchCaps) {}

  /** Takes a slot for the holder; the returned function gives it back, once. */
  admit(h: StreamHolder): () => void {
    const c = this.caps;
    const frame = h.kind === "frame";
    const keys: Record<Counter, string | undefined> = {
      token: `t ${h.token}`,
      account: `${h.kind} a ${h.account}`,
      address: `${h.kind} i ${addressKey(h.address)}`,
      customer: frame ? `c ${h.account} ${h.customer}` : undefined,
    };
    if (this.count(keys.token) >= c.perToken)
      throw new DomainError(
        "resource_exhausted",
        `at most ${c.perToken} watch streams may be open with one token; close one first`,
      );
    if (frame && this.count(keys.customer) >= c.perCustomer)
      throw new DomainError(
        "resource_exhausted",
        `at most ${c.perCustomer} watch streams may be open for one customer; close one first`,
        { retryAfterSeconds: 5 },
      );
    const perAccount = frame ? c.framesPerAccount : c.perAccount;
    if (this.count(keys.account) >= perAccount)
      throw new DomainError(
        "resource_exhausted",
        frame
          ? `this account's frames have ${perAccount} watch streams open on this server, their share; retry later`
          : `this account has ${perAccount} watch streams open on this server, its share; close one first`,
        { retryAfterSeconds: 5 },
      );
    if (this.count(keys.address) >= c.perAddress)
      throw new DomainError(
        "resource_exhausted",
        `this client address has ${c.perAddress} watch streams open on this server, its share; close one first`,
        { retryAfterSeconds: 5 },
      );
    if (this.total >= c.perInstance || (frame && this.frames >= c.framesPerInstance))
      throw new DomainError("resource_exhausted", "too many watch streams are open on this server; retry later", {
        retryAfterSeconds: 5,
      });
    this.total++;
    if (frame) this.frames++;
    for (const k of Object.values(keys)) if (k !== undefined) this.bump(k, 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.total--;
      if (frame) this.frames--;
      for (const k of Object.values(keys)) if (k !== undefined) this.bump(k, -1);
    };
  }

  /** Streams open now. */
  get open(): number {
    return this.total;
  }

  /** Frame streams open now. */
  get openFrames(): number {
    return this.frames;
  }

  private count(key: string | undefined): number {
    return key === undefined ? 0 : (this.held.get(key) ?? 0);
  }

  private bump(key: string, by: number): void {
    const n = (this.held.get(key) ?? 0) + by;
    if (n <= 0) this.held.delete(key);
    else this.held.set(key, n);
  }
}
