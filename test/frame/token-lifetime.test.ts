import { describe, expect, it } from "vitest";
import { earlyRefreshDelayMs, tokenLifetimeMs } from "../../src/frame/browser/token-lifetime.js";

const jwt = (claims: Record<string, unknown>) => `e30.${Buffer.from(JSON.stringify(claims)).toString("base64url")}.sig`;

describe("when the frame asks for a new token", () => {
  const token = jwt({ iat: 1_000, exp: 1_020 });
  it("is between 70% and 85% of the lifetime in iat/exp, whatever this browser's clock says", () => {
    expect(tokenLifetimeMs(token, 0)).toBe(20_000);
    expect(earlyRefreshDelayMs(token, 5e12, 0)).toBe(14_000);
    expect(earlyRefreshDelayMs(token, 0, 0.5)).toBe(15_500);
    expect(earlyRefreshDelayMs(token, 0, 0.9999999)).toBeLessThanOrEqual(17_000);
  });
  it("uses the time left when the token has no iat, and nothing when the lifetime cannot be read", () => {
    expect(tokenLifetimeMs(jwt({ exp: 100 }), 60_000)).toBe(40_000);
    expect(tokenLifetimeMs(jwt({ exp: 100 }), 200_000)).toBeUndefined();
    expect(tokenLifetimeMs("opaque-token", 0)).toBeUndefined();
    expect(tokenLifetimeMs("a.%%%.c", 0)).toBeUndefined();
    expect(tokenLifetimeMs(jwt({ iat: 1 }), 0)).toBeUndefined();
  });
  it("never exceeds the longest timer a browser keeps (a longer one would fire at once)", () => {
    expect(earlyRefreshDelayMs(jwt({ iat: 0, exp: 10 ** 9 }), 0, 1)).toBe(2 ** 31 - 1);
  });
});
