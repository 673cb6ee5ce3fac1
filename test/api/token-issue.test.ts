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

  it("names a session whose id begins with its issue instant (uuid v7), so new sessions sort last", async () => {
    const sessions: { sid: string; ims: number; before: number }[] = [];
    for (const user of ["customer-2", "customer-3"]) {
      const before = Date.now();
      const r = await postJson(fx.s.url, "/ai_agent/get_access_token", {
        user_id: user,
        chatbot_id: fx.a.chatbotId,
        client_api_key: fx.a.apiKey,
      });
      expect(r.status).toBe(200);
      const claims = JSON.parse(Buffer.from(r.body.data.access_token.split(".")[1], "base64url").toString("utf8"));
      sessions.push({ sid: claims.sid, ims: claims.ims, before });
    }
    const instant = (sid: string) => Number.parseInt(sid.replace("-", "").slice(0, 12), 16);
    for (const { sid, ims, before } of sessions) {
      expect(sid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      // The session begins once the key is read, a moment before its first access token is signed (`ims`).
      expect(instant(sid)).toBeGreaterThanOrEqual(before);
      expect(instant(sid)).toBeLessThanOrEqual(ims);
    }
    expect(sessions[0]!.sid.slice(0, 13) <= sessions[1]!.sid.slice(0, 13)).toBe(true);
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
