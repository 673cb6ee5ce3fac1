import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import { DEFAULT_RETRY_DELAYS_MS, nextAttempt } from "../../src/domain/webhook/retry.js";

describe("the retry schedule", () => {
  it("by default retries for more than a day, seven times after the first attempt", () => {
    const config = loadConfig({});
    expect(config.webhooks.retryDelaysMs).toEqual(DEFAULT_RETRY_DELAYS_MS);
    expect(DEFAULT_RETRY_DELAYS_MS).toHaveLength(7);
    expect(DEFAULT_RETRY_DELAYS_MS.reduce((a, b) => a + b, 0)).toBeGreaterThan(86_400_000);
    expect(config.webhooks.retentionDays).toBe(30);
  });

  it("backs off exponentially-ish, each wait within a fifth of the schedule's, and gives up once spent", () => {
    for (const [i, base] of DEFAULT_RETRY_DELAYS_MS.entries()) {
      expect(nextAttempt(i + 1, 1000, DEFAULT_RETRY_DELAYS_MS, () => 0)).toBe(1000 + base * 0.8);
      expect(nextAttempt(i + 1, 1000, DEFAULT_RETRY_DELAYS_MS, () => 0.999999)).toBeLessThanOrEqual(1000 + base * 1.2);
    }
    expect(nextAttempt(DEFAULT_RETRY_DELAYS_MS.length + 1, 1000, DEFAULT_RETRY_DELAYS_MS)).toBeNull();
    // Jitter: two endpoints that failed together are not retried at the same instant.
    const draws = new Set(Array.from({ length: 20 }, () => nextAttempt(3, 0, DEFAULT_RETRY_DELAYS_MS)));
    expect(draws.size).toBeGreaterThan(1);
  });

  it("reads AIAGENT_WEBHOOK_RETRY_DELAYS and AIAGENT_EVENT_RETENTION_DAYS, refusing what cannot be used", () => {
    const c = loadConfig({ AIAGENT_WEBHOOK_RETRY_DELAYS: "0.5, 2,60", AIAGENT_EVENT_RETENTION_DAYS: "7" });
    expect(c.webhooks.retryDelaysMs).toEqual([500, 2000, 60_000]);
    expect(c.webhooks.retentionDays).toBe(7);
    expect(() => loadConfig({ AIAGENT_WEBHOOK_RETRY_DELAYS: "5,soon" })).toThrow(/AIAGENT_WEBHOOK_RETRY_DELAYS/);
    expect(() => loadConfig({ AIAGENT_EVENT_RETENTION_DAYS: "0" })).toThrow(/AIAGENT_EVENT_RETENTION_DAYS/);
  });
});
