import type { RateLimiterAbstract } from "rate-limiter-flexible";
import { ConfigError } from "../config.js";
import type { AuditLog } from "../domain/audit/audit-log.js";
import type { EventLog } from "../domain/log/event-log.js";
import type { Repositories } from "../domain/store.js";
import { JwtStrategy } from "../domain/token/jwt-strategy.js";
import { KeyRing } from "../domain/token/key-ring.js";
import { KeySealError, type KeySealer } from "../domain/token/key-sealer.js";
import { TokenService } from "../domain/token/token-service.js";
import { keySealer } from "../key-encryption.js";
import { type CounterStore, type LimitRule, limiterCounter } from "../protocol/rate-limit.js";
import { noTokenLimits, type TokenGuard, tokenLimits } from "../protocol/token-limits.js";
import type { Base } from "./base.js";

/** The issuer claim of every token this service signs. */
export const ISSUER = "aiagent";

export interface TokenDeps {
  /** The back end's counters of one abuse-limit rule (shared by every instance where the back end can). */
  rateLimiter: (rule: LimitRule) => RateLimiterAbstract;
  eventLog: EventLog;
  audit: AuditLog<Repositories>;
  /** When the generated key-encryption secret is warned about. */
  secretWarning: "every start" | "when generated" | undefined;
}

export interface TokenParts {
  keys: KeyRing;
  /** Seals the secrets kept at rest (signing keys, webhook secrets, agents' keys). */
  sealer: KeySealer;
  tokens: TokenService;
  tokenGuard: TokenGuard;
  /** Stops following other instances' key rotations. */
  stopKeyWatch: () => void;
}

/** The signing keys, the token service and the token routes' abuse limits. */
export async function composeTokens(b: Base, d: TokenDeps): Promise<TokenParts> {
  const { config, store, clock } = b;
  let keys: KeyRing;
  let sealer: KeySealer;
  try {
    sealer = keySealer(config, b.log, d.secretWarning);
    keys = await KeyRing.open(store.signingKeys, clock, {
      maxTokenLifetimeMs: Math.max(config.accessTokenTtl, config.idTokenTtl) * 1000,
      refreshIntervalMs: config.signingKeyRefreshSeconds * 1000,
      sealer,
      transaction: b.transaction,
    });
  } catch (e) {
    await store.close();
    if (e instanceof KeySealError) throw new ConfigError(`signing keys in ${config.dbPath}: ${e.message}`);
    throw e;
  }
  // On PostgreSQL a rotation anywhere is announced, and this instance signs with the new key at once.
  const stopKeyWatch = await store.onSigningKeysChanged(() => void keys.reload().catch(() => undefined));
  // Several instances on one PostgreSQL count the token routes' abuse limits together.
  const counters: CounterStore = (rule) => limiterCounter(d.rateLimiter(rule), rule);
  const tokenGuard = config.rateLimit ? tokenLimits(config.rateLimit, counters) : noTokenLimits;
  const tokens = new TokenService({
    ...store,
    transaction: b.transaction,
    log: d.eventLog,
    audit: d.audit,
    jwt: new JwtStrategy(keys, clock, ISSUER),
    clock,
    ttl: { access: config.accessTokenTtl, refresh: config.refreshTokenTtl, id: config.idTokenTtl },
    admit: tokenGuard.account,
    admitRefused: tokenGuard.accountRefused,
    // One round trip per issue on PostgreSQL, for an API key this instance has seen valid (access-tokens.ts).
    issueSession: (s) => store.issueSession(s),
  });
  return { keys, sealer, tokens, tokenGuard, stopKeyWatch };
}
