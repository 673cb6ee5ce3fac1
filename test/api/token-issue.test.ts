import { describe, expect, it } from "vitest";
import { serverForFile } from "../helpers/file-server.js";
import { postJson, reasonOf } from "../helpers/http.js";

const fx = serverForFile();

describe("POST /ai_agent/get_access_token", () => {
  it("returns exactly the documented token set, with integer millisecond expiries", async () => {
    const before = Date.now();
    const r = await postJson(fx.s.url, "/ai_agent/get_access_token", {
      user_id: "customer-1",
      chatbot_id: fx.a.chatbotId,
      client_api_key: fx.a.apiKey,
    });
    expect(r.status).toBe(200);
    expect(Object.keys(r.body)).toEqual(["data"]);
    const d = r.body.data;
    expect(Object.keys(d).sort()).toEqual([
      "access_token",
      "access_token_expires_at",
      "refresh_token",
      "refresh_token_expires_at",
    ]);
    expect(Number.isInteger(d.access_token_expires_at)).toBe(true);
    expect(Number.isInteger(d.refresh_token_expires_at)).toBe(true);
    expect(d.access_token_expires_at).toBeGreaterThanOrEqual(before + 15 * 60_000 - 1000);
    expect(d.access_token_expires_at).toBeLessThanOrEqual(Date.now() + 15 * 60_000);
    expect(d.refresh_token_expires_at).toBeGreaterThan(before + 29 * 24 * 3600_000);
    expect(d.refresh_token).toMatch(/^rt_[A-Za-z0-9_-]{43}$/);
    expect(d.access_token.split(".")).toHaveLength(3);
    expect(r.headers.get("cache-control")).toBe("no-store");
  });

  it("refuses a wrong client_api_key with unauthenticated", async () => {
    const r = await postJson(fx.s.url, "/ai_agent/get_access_token", {
      user_id: "c",
      chatbot_id: fx.a.chatbotId,
      client_api_key: "cak_wrong",
    });
    expect(r.status).toBe(401);
    expect(r.body.code).toBe("unauthenticated");
    expect(reasonOf(r.body)).toBe("TokenInvalidError");
  });

  it("names a malformed chatbot_id", async () => {
    const r = await postJson(fx.s.url, "/ai_agent/get_access_token", {
      user_id: "c",
      chatbot_id: "not-a-uuid",
      client_api_key: fx.a.apiKey,
    });
    expect(r.status).toBe(400);
    expect(r.body.code).toBe("invalid_argument");
    expect(r.body.message).toContain("chatbot_id");
  });
});
