import { type RateLimiterAbstract, RateLimiterMemory, RateLimiterRes } from "rate-limiter-flexible";

/** One counting rule: at most `points` hits per `durationS` seconds per key; over it the key waits `blockS` seconds. */
export interface LimitRule {
  name: string;
  points: number;
  durationS: number;
  blockS: number;
}

/** Counters of one rule, keyed by whatever the caller counts (an address, a key hash, an account). */
export interface Counter {
  /** Counts one hit; resolves to the seconds to wait when the key is now over its limit, else 0. */
  hit(key: string): Promise<number>;
  /** The seconds to wait when the key has used up its limit (the next hit would be over), without counting; else 0. */
  wait(key: string): Promise<number>;
  /** Takes back one hit counted for the key (a call refused after it was counted hands its slot back). */
  giveBack(key: string): Promise<void>;
}

/**
 * Makes the counters of a rule. The memory store serves one process; several instances behind a load balancer
 * need a shared one, e.g. `(rule) => limiterCounter(new RateLimiterRedis({ storeClient, keyPrefix: rule.name, ... }),
 * rule)`.
 */
export type CounterStore = (rule: LimitRule) => Counter;

/** Counters over any rate-limiter-flexible limiter (memory, Redis, Postgres…), so stores are swappable. */
export function limiterCounter(limiter: RateLimiterAbstract, rule: LimitRule): Counter {
  const seconds = (res: RateLimiterRes) => Math.max(1, Math.ceil(res.msBeforeNext / 1000));
  return {
    hit: async (key) => {
      try {
        await limiter.consume(key);
        return 0;
      } catch (e) {
        if (e instanceof RateLimiterRes) return seconds(e);
        throw e;
      }
    },
    wait: async (key) => {
      const res = await limiter.get(key);
      return res && res.consumedPoints >= rule.points ? seconds(res) : 0;
    },
    giveBack: async (key) => {
      await limiter.reward(key, 1);
    },
  };
}

/** The in-process store: counters live in this process's memory and expire on their own. */
export const memoryStore: CounterStore = (rule) =>
  limiterCounter(
    new RateLimiterMemory({
      keyPrefix: rule.name,
      points: rule.points,
      duration: rule.durationS,
      blockDuration: rule.blockS,
    }),
    rule,
  );

/** A counter that never limits (a rule whose count is 0). */
export const unlimited: Counter = { hit: async () => 0, wait: async () => 0, giveBack: async () => undefined };

/**
 * The key of a client address: IPv4 as is (also when written IPv4-mapped), IPv6 by its /64 prefix, because
 * one host is routinely given a whole /64 and could otherwise rotate addresses at will.
 */
export function addressKey(peer: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(peer);
  if (mapped) return mapped[1]!;
  if (!peer.includes(":")) return peer;
  const [head = "", tail] = peer.split("::");
  const h = head === "" ? [] : head.split(":");
  const t = tail === undefined || tail === "" ? [] : tail.split(":");
  const groups =
    tail === undefined ? h : [...h, ...Array<string>(Math.max(0, 8 - h.length - t.length)).fill("0"), ...t];
  return `${groups
    .slice(0, 4)
    .map((g) => g.toLowerCase().replace(/^0+(?=.)/, ""))
    .join(":")}::/64`;
}
