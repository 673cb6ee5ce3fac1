import { createHash } from "node:crypto";
import type { Caller } from "../caller.js";
import type { Clock } from "../clock.js";
import { DomainError, invalidArgument } from "../errors.js";
import type { IdempotencyRepository } from "./repository.js";

/** How long a key answers its first answer; after it, the key may name a new write. */
export const IDEMPOTENCY_WINDOW_MS = 24 * 3600_000;
/** Visible ASCII, as HTTP header values and Stripe's keys are; a UUID fits many times over. */
const KEY = /^[\x21-\x7e]{1,255}$/;

/** A write asked under a key: who asked (keys never cross callers), the key, and a digest of what was asked. */
export interface KeyedRequest {
  owner: string;
  key: string;
  requestHash: string;
}

/**
 * Thrown inside a unit of work whose key another write took first: it rolls back, and that write's answer is replayed.
 */
class KeyTaken extends Error {}

/**
 * Idempotency keys: a write with a key is recorded with its answer in its own unit of work; the same key again
 * (from the same caller, within the window) answers that answer and writes nothing; with other input it is refused.
 */
export class IdempotencyKeys {
  constructor(
    private readonly repo: Pick<IdempotencyRepository, "find">,
    private readonly clock: Clock,
  ) {}

  /** The keyed form of a write; undefined without a key. Bad keys are refused naming `idempotency_key`. */
  request(caller: Caller, key: string | undefined, operation: string, input: unknown): KeyedRequest | undefined {
    if (key === undefined || key === "") return undefined;
    if (!KEY.test(key)) throw invalidArgument("idempotency_key", "must be 1 to 255 visible ASCII characters");
    const owner =
      caller.kind === "frame"
        ? `frame:${caller.accountId}:${caller.chatbotId}:${caller.userId}`
        : `account:${caller.accountId}:${caller.email.toLowerCase()}`;
    const requestHash = createHash("sha256").update(operation).update("\n").update(JSON.stringify(input)).digest("hex");
    return { owner, key, requestHash };
  }

  /** The first answer under this key, if a write with it committed within the window; refused when input differs. */
  async previous<T>(r: KeyedRequest | undefined): Promise<T | undefined> {
    if (!r) return undefined;
    const found = await this.repo.find(r.owner, r.key);
    if (!found || found.createdAt < this.staleBefore()) return undefined;
    if (found.requestHash !== r.requestHash)
      throw new DomainError(
        "already_exists",
        "idempotency_key: was used for a different request; choose a new key for a new write",
        { field: "idempotency_key" },
      );
    return JSON.parse(found.answer) as T;
  }

  /** Records the key and answer in the unit of work `tx`; a concurrent write that took the key first rolls it back. */
  async record(
    tx: { idempotency: IdempotencyRepository },
    r: KeyedRequest | undefined,
    answer: unknown,
  ): Promise<void> {
    if (!r) return;
    const now = this.clock.now();
    const fresh = await tx.idempotency.insert(
      { ...r, answer: JSON.stringify(answer), createdAt: now },
      now - IDEMPOTENCY_WINDOW_MS,
    );
    if (!fresh) throw new KeyTaken();
  }

  /**
   * Runs a keyed write once: the previous answer when there is one, else `write` (which calls `record` in its unit
   * of work); losing a race for the key answers the winner's answer.
   */
  async once<T>(r: KeyedRequest | undefined, write: () => Promise<T>): Promise<T> {
    const before = await this.previous<T>(r);
    if (before !== undefined) return before;
    try {
      return await write();
    } catch (e) {
      if (!(e instanceof KeyTaken)) throw e;
      const winner = await this.previous<T>(r);
      if (winner !== undefined) return winner;
      throw new DomainError("unavailable", "a write with this idempotency_key is in progress; retry", {
        retryAfterSeconds: 1,
      });
    }
  }

  private staleBefore(): number {
    return this.clock.now() - IDEMPOTENCY_WINDOW_MS;
  }
}
