import { createHash } from "node:crypto";
import type { RateLimits } from "../config.js";
import { DomainError } from "../domain/errors.js";
import { isUnknownCredential, LaunchRefusedError } from "../domain/token/token-service.js";
import type { Call } from "./call.js";
import { addressKey, type Counter, type CounterStore, memoryStore, unlimited } from "./rate-limit.js";

/** What a token request is aimed at: the chatbot (access and refresh tokens) or the account e-mail (ID tokens). */
export interface TokenTarget {
  /** e.g. `chatbot:<uuid>` or `account:<e-mail>`, as the caller wrote it. */
  target: string;
  /** The client_api_key presented, if any (counted by its hash, never kept). */
  apiKey?: string | undefined;
  /** A password log-in: also subject to the per-account password back-off. */
  password?: boolean;
}

/** The abuse limits of the token endpoints, as the handlers use them. */
export interface TokenGuard {
  /** Before any work: refuses a blocked address, pair or password log-in, and counts the request. */
  admit(call: Call, t: TokenTarget): Promise<void>;
  /** After a credential this service never issued (a guess): counts a failure. */
  failed(call: Call, t: TokenTarget): Promise<void>;
  /** After the credential is known good, before anything is written: counts an issuance for the account. */
  account(accountId: string): Promise<void>;
  /**
   * Hands back an issuance `account` counted for a call refused afterwards (counted before its key's check, for a
   * key already seen valid: see TokenServiceDeps.admit).
   */
  accountRefused(accountId: string): Promise<void>;
  /** After a password log-in succeeded: the (address, e-mail) pair becomes a place the person signs in from. */
  succeeded(call: Call, t: TokenTarget): Promise<void>;
}

/** No limits at all (AIAGENT_RATE_LIMIT=off). */
export const noTokenLimits: TokenGuard = {
  admit: async () => undefined,
  failed: async () => undefined,
  account: async () => undefined,
  accountRefused: async () => undefined,
  succeeded: async () => undefined,
};

/** Runs one token use case inside the abuse limits: refused early when blocked, a guessed credential counted. */
export async function limited<T>(limits: TokenGuard, call: Call, t: TokenTarget, fn: () => Promise<T>): Promise<T> {
  await limits.admit(call, t);
  try {
    const out = await fn();
    await limits.succeeded(call, t);
    return out;
  } catch (e) {
    if (isUnknownCredential(e) || (e instanceof LaunchRefusedError && e.why === "unknown"))
      await limits.failed(call, t);
    throw e;
  }
}

/**
 * How long a place a person signed in from stays known: the per-e-mail back-off never refuses them there. Twenty
 * days: the memory store expires keys with a timer, and timers end at 24.8 days.
 */
export const KNOWN_PLACE_SECONDS = 20 * 24 * 3600;

const MINUTE = 60;

function tooMany(what: string, seconds: number): DomainError {
  return new DomainError("resource_exhausted", `${what}; retry after ${seconds} s`, { retryAfterSeconds: seconds });
}

/**
 * Rate limits per client address, per API key and per account, and failed-credential back-off per address,
 * per (address, target) and, for passwords, per account: an attacker guessing one account's credentials is
 * stopped without touching any other account, and the owner's server keeps working from its own address. The
 * per-account password back-off applies only to places the person has not signed in from (an address, by its /64
 * for IPv6, with a successful password log-in for that e-mail in the last 20 days): an attacker elsewhere cannot
 * lock a person out of the places they use (OWASP's "device cookie" idea, keyed by the address).
 */
export function tokenLimits(cfg: RateLimits, store: CounterStore = memoryStore): TokenGuard {
  const rule = (name: string, points: number, durationS: number, blockS: number): Counter =>
    points > 0 ? store({ name, points, durationS, blockS }) : unlimited;
  const perAddress = rule("tok-addr", cfg.perAddress, MINUTE, 0);
  const perKey = rule("tok-key", cfg.perKey, MINUTE, 0);
  const perAccount = rule("tok-acct", cfg.perAccount, MINUTE, 0);
  const failAddress = rule("fail-addr", cfg.failuresPerAddress, cfg.blockSeconds, cfg.blockSeconds);
  const failTarget = rule("fail-target", cfg.failuresPerTarget, cfg.blockSeconds, cfg.blockSeconds);
  const failPassword = rule("fail-pw", cfg.passwordFailures, cfg.blockSeconds, cfg.blockSeconds);
  // One success makes the place known: the counter is "used up" (wait > 0) for as long as it is remembered.
  const knownPlace =
    cfg.passwordFailures > 0
      ? store({ name: "known-place", points: 1, durationS: KNOWN_PLACE_SECONDS, blockS: 0 })
      : unlimited;

  const keys = (call: Call, t: TokenTarget) => {
    const addr = addressKey(call.peer);
    const target = t.target.slice(0, 300).toLowerCase();
    return { addr, pair: `${addr}|${target}`, target };
  };

  return {
    async admit(call, t) {
      const k = keys(call, t);
      let wait = await failAddress.wait(k.addr);
      if (wait) throw tooMany("too many failed credentials from this address", wait);
      wait = await failTarget.wait(k.pair);
      if (wait) throw tooMany("too many failed credentials for this chatbot_id or account from this address", wait);
      if (t.password && (wait = await failPassword.wait(k.target)) && !(await knownPlace.wait(k.pair)))
        throw tooMany(
          "sign-ins to this account from places it has not signed in from are paused after too many wrong passwords; " +
            "sign in from a device you used before, ask an admin for a password reset link, or wait",
          wait,
        );
      wait = await perAddress.hit(k.addr);
      if (wait) throw tooMany("too many token requests from this address", wait);
      if (t.apiKey) {
        wait = await perKey.hit(createHash("sha256").update(t.apiKey).digest("base64url"));
        if (wait) throw tooMany("too many token requests with this client_api_key", wait);
      }
    },
    async failed(call, t) {
      const k = keys(call, t);
      await failAddress.hit(k.addr);
      await failTarget.hit(k.pair);
      if (t.password) await failPassword.hit(k.target);
    },
    async succeeded(call, t) {
      if (t.password) await knownPlace.hit(keys(call, t).pair);
    },
    async account(accountId) {
      const wait = await perAccount.hit(accountId);
      if (wait) throw tooMany("too many tokens issued for this account", wait);
    },
    async accountRefused(accountId) {
      await perAccount.giveBack(accountId);
    },
  };
}
