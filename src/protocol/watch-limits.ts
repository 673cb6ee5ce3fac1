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

/**
 * One key's count of open streams (a token, an account's share, an address, a customer), shared by every stream that
 * holds it: a stream keeps a reference to it, not a key string of its own (eight tabs of one customer share four).
 */
class Count {
  n = 0;
  constructor(readonly key: string) {}
}

/** A stream's slots, held until `release` gives them back (once). */
export class WatchHold {
  private released = false;

  constructor(
    private readonly limits: WatchLimits,
    readonly frame: boolean,
    readonly token: Count,
    readonly account: Count,
    readonly address: Count,
    readonly customer: Count | undefined,
  ) {}

  release(): void {
    if (this.released) return;
    this.released = true;
    this.limits.giveBack(this);
  }
}

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
  private readonly held = new Map<string, Count>();

  constructor(private readonly caps: WatchCaps) {}

  /** Takes a slot for the holder; `release` on what it returns gives it back, once. */
  admit(h: StreamHolder): WatchHold {
    const c = this.caps;
    const frame = h.kind === "frame";
    const token = this.count(`t ${h.token}`);
    const customer = frame ? this.count(`c ${h.account} ${h.customer}`) : undefined;
    const account = this.count(`${h.kind} a ${h.account}`);
    const address = this.count(`${h.kind} i ${addressKey(h.address)}`);
    if (token.n >= c.perToken)
      throw this.refused(
        new DomainError(
          "resource_exhausted",
          `at most ${c.perToken} watch streams may be open with one token; close one first`,
        ),
        token,
        customer,
        account,
        address,
      );
    if (customer && customer.n >= c.perCustomer)
      throw this.refused(
        new DomainError(
          "resource_exhausted",
          `at most ${c.perCustomer} watch streams may be open for one customer; close one first`,
          { retryAfterSeconds: 5 },
        ),
        token,
        customer,
        account,
        address,
      );
    const perAccount = frame ? c.framesPerAccount : c.perAccount;
    if (account.n >= perAccount)
      throw this.refused(
        new DomainError(
          "resource_exhausted",
          frame
            ? `this account's frames have ${perAccount} watch streams open on this server, their share; retry later`
            : `this account has ${perAccount} watch streams open on this server, its share; close one first`,
          { retryAfterSeconds: 5 },
        ),
        token,
        customer,
        account,
        address,
      );
    if (address.n >= c.perAddress)
      throw this.refused(
        new DomainError(
          "resource_exhausted",
          `this client address has ${c.perAddress} watch streams open on this server, its share; close one first`,
          { retryAfterSeconds: 5 },
        ),
        token,
        customer,
        account,
        address,
      );
    if (this.total >= c.perInstance || (frame && this.frames >= c.framesPerInstance))
      throw this.refused(
        new DomainError("resource_exhausted", "too many watch streams are open on this server; retry later", {
          retryAfterSeconds: 5,
        }),
        token,
        customer,
        account,
        address,
      );
    this.total++;
    if (frame) this.frames++;
    token.n++;
    account.n++;
    address.n++;
    if (customer) customer.n++;
    return new WatchHold(this, frame, token, account, address, customer);
  }

  /** Streams open now. */
  get open(): number {
    return this.total;
  }

  /** Frame streams open now. */
  get openFrames(): number {
    return this.frames;
  }

  /** Keys counted now (those with a stream open): bounded by the streams, not by the holders ever seen. */
  get keys(): number {
    return this.held.size;
  }

  /** @internal WatchHold.release */
  giveBack(h: WatchHold): void {
    this.total--;
    if (h.frame) this.frames--;
    this.drop(h.token);
    this.drop(h.account);
    this.drop(h.address);
    if (h.customer) this.drop(h.customer);
  }

  private count(key: string): Count {
    let n = this.held.get(key);
    if (!n) this.held.set(key, (n = new Count(key)));
    return n;
  }

  private drop(n: Count): void {
    if (--n.n <= 0) this.held.delete(n.key);
  }

  /** A refused stream leaves no key behind that no stream holds. */
  private refused(e: DomainError, ...counts: (Count | undefined)[]): DomainError {
    for (const n of counts) if (n && n.n === 0) this.held.delete(n.key);
    return e;
  }
}
