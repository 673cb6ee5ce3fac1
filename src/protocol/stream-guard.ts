import { isDomainError } from "../domain/errors.js";
import type { Call } from "./call.js";

/** The RPCs whose success may revoke a credential: after one, open streams are re-checked at once. */
export const REVOKING_METHODS: ReadonlySet<string> = new Set([
  "ChangePassword",
  "RotateApiKeys",
  "RevokeApiKey",
  "DisableChatbot",
  "UpdateMember",
  "RemoveMember",
  "AcceptInvitation",
  "RevokeSessions",
  "RevokeSession",
  "RefreshToken",
]);
/** How many streams' credentials one sweep re-checks at once. */
const SWEEP_CONCURRENCY = 16;

interface Group {
  /** The same check the gate ran when the stream opened; throws when the credential no longer passes. */
  recheck: () => Promise<unknown>;
  streams: Set<AbortController>;
  /** The latest check: the event count when it started, and its outcome. */
  last?: { from: number; done: Promise<void> };
}

/**
 * Open streams obey the rule unary calls obey: each stream is registered by its credential (token and RPC), and
 * the gate's own check is run again for it on every sweep — every `intervalMs` (so a credential revoked through any
 * instance, on any back end, ends its streams within that interval plus one check), and at once after this
 * instance served an RPC that may revoke one. A stream whose check now fails ends with that check's error
 * (`unauthenticated` with reason TokenRevokedError or TokenExpiredError, or `permission_denied` after a role
 * change). And no event is delivered before a check that started after the event arrived has passed (checks are
 * shared by a stream's events and by the streams of one credential): an event written after a revocation, through
 * any instance, never reaches the revoked credential's stream. It wraps the stream's lifetime from outside: it
 * knows nothing of what the stream reads.
 */
export class StreamGuard {
  private readonly groups = new Map<string, Group>();
  private readonly timer: NodeJS.Timeout;
  private sweeping: Promise<void> | undefined;
  private again = false;
  /** Events received so far, by every stream: orders each event against the checks. */
  private received = 0;

  constructor(intervalMs: number) {
    this.timer = setInterval(() => void this.sweep(), intervalMs);
    this.timer.unref();
  }

  /** Streams open now under the guard. */
  get open(): number {
    let n = 0;
    for (const g of this.groups.values()) n += g.streams.size;
    return n;
  }

  /**
   * Runs a stream under the guard: `open` gets a signal that aborts when the client goes (`signal`) and when the
   * credential dies; the stream then ends with the check's error, whatever the stream was waiting for.
   */
  async *run<T>(
    key: string,
    recheck: () => Promise<unknown>,
    signal: AbortSignal,
    open: (signal: AbortSignal) => AsyncIterable<T>,
  ): AsyncGenerator<T> {
    const stop = new AbortController();
    let group = this.groups.get(key);
    if (!group) {
      group = { recheck, streams: new Set() };
      this.groups.set(key, group);
    }
    group.streams.add(stop);
    const ended = new Promise<never>((_, reject) =>
      stop.signal.addEventListener("abort", () => reject(stop.signal.reason), { once: true }),
    );
    ended.catch(() => undefined);
    const it = open(AbortSignal.any([signal, stop.signal]))[Symbol.asyncIterator]();
    let done = false;
    try {
      for (;;) {
        const r = await Promise.race([it.next(), ended]);
        if (r.done) {
          done = true;
          break;
        }
        await Promise.race([this.checkedSince(group, ++this.received), ended]);
        yield r.value;
      }
      if (stop.signal.aborted) throw stop.signal.reason;
    } finally {
      // The inner stream sees the aborted signal and winds down on its own; it is not waited for.
      if (!done) void it.return?.(undefined)?.catch(() => undefined);
      group.streams.delete(stop);
      if (group.streams.size === 0 && this.groups.get(key) === group) this.groups.delete(key);
    }
  }

  /**
   * Resolves once a check of the group's credential that started after event `n` arrived has passed (one already
   * under way may serve); rejects with the check's error, having ended the group's streams when it is a verdict.
   */
  private checkedSince(group: Group, n: number): Promise<void> {
    if (group.last && group.last.from >= n) return group.last.done;
    return this.check(group);
  }

  private check(group: Group): Promise<void> {
    const done = group.recheck().then(
      () => undefined,
      (e: unknown) => {
        if (isVerdict(e)) for (const s of group.streams) s.abort(e);
        throw e;
      },
    );
    done.catch(() => undefined);
    group.last = { from: this.received, done };
    return done;
  }

  /** Re-checks every open stream's credential now (after a revocation here), besides the periodic sweep. */
  nudge(): void {
    void this.sweep();
  }

  /** One pass over the open streams' credentials; a pass asked for while one runs runs once more after it. */
  sweep(): Promise<void> {
    if (this.sweeping) {
      this.again = true;
      return this.sweeping;
    }
    this.sweeping = this.pass().finally(() => {
      this.sweeping = undefined;
      if (this.again) {
        this.again = false;
        void this.sweep();
      }
    });
    return this.sweeping;
  }

  close(): void {
    clearInterval(this.timer);
  }

  private async pass(): Promise<void> {
    const queue = [...this.groups.values()];
    const worker = async () => {
      // Only a verdict on the credential ends streams; a storage hiccup is retried at the next sweep.
      for (let g = queue.shift(); g; g = queue.shift()) await this.check(g).catch(() => undefined);
    };
    await Promise.all(Array.from({ length: Math.min(SWEEP_CONCURRENCY, queue.length) }, worker));
  }
}

/** A failure that says the credential no longer passes (rather than that it could not be checked). */
function isVerdict(e: unknown): boolean {
  return isDomainError(e) && (e.kind === "unauthenticated" || e.kind === "permission_denied");
}

/** The call as a re-check sees it: the stream's answer headers are sent, so nothing more is set on them. */
export function recheckCall(call: Call): Call {
  return {
    header: (n) => call.header(n),
    queryAccessToken: call.queryAccessToken,
    peer: call.peer,
    signal: call.signal,
    setResponseHeader: () => undefined,
    encoder: call.encoder,
  };
}
