/** The share of a token's lifetime after which the frame asks for a new one: a random point in [FROM, TO). */
export const EARLY_REFRESH_FROM = 0.7;
export const EARLY_REFRESH_TO = 0.85;
/** setTimeout's largest delay (about 24.8 days); a longer wait would fire at once. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** The lifetime of a JWT in milliseconds, read from its claims without verifying it; undefined when unreadable. */
export function tokenLifetimeMs(token: string, nowMs: number): number | undefined {
  const payload = token.split(".")[1];
  if (!payload) return undefined;
  let claims: { exp?: unknown; iat?: unknown };
  try {
    const b64 = payload.replace(/-/g, "+").replace(/_/g, "/");
    claims = JSON.parse(atob(b64 + "=".repeat((4 - (b64.length % 4)) % 4))) as typeof claims;
  } catch {
    return undefined;
  }
  if (typeof claims !== "object" || claims === null || typeof claims.exp !== "number") return undefined;
  // exp − iat does not depend on this browser's clock agreeing with the service's; without iat the clock must do.
  const lifetime = typeof claims.iat === "number" ? (claims.exp - claims.iat) * 1000 : claims.exp * 1000 - nowMs;
  return Number.isFinite(lifetime) && lifetime > 0 ? lifetime : undefined;
}

/**
 * When to ask for a new token, counted from receiving this one: a random point between 70% and 85% of its lifetime,
 * so many frames (or many customers) do not refresh in step. Undefined when the lifetime cannot be read.
 */
export function earlyRefreshDelayMs(token: string, nowMs: number, random: number): number | undefined {
  const lifetime = tokenLifetimeMs(token, nowMs);
  if (lifetime === undefined) return undefined;
  const share = EARLY_REFRESH_FROM + (EARLY_REFRESH_TO - EARLY_REFRESH_FROM) * random;
  return Math.min(Math.round(lifetime * share), MAX_TIMER_MS);
}
