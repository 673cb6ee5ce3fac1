import { describe, expect, it } from "vitest";
import { serverForFile } from "../helpers/file-server.js";
import { idToken, issueTokens } from "../helpers/flows.js";
import { getJson, postJson } from "../helpers/http.js";

// A session's last use is kept to the minute: refreshes within a minute of the recorded use, from the same
// User-Agent, do not write it again (each would otherwise be a database write per refresh).

const fx = serverForFile();

async function session(userId: string) {
  const r = await getJson(
    fx.s.url,
    "/v1/account/sessions",
    { chatbot_id: fx.a.chatbotId, user_id: userId },
    { authorization: `Bearer ${await idToken(fx.s.url, fx.a)}` },
  );
  expect(r.status).toBe(200);
  return r.body.data.sessions[0] as { last_used_at: string; user_agent: string };
}

async function refresh(userId: string, refreshToken: string, userAgent: string) {
  const r = await postJson(
    fx.s.url,
    "/ai_agent/refresh_token",
    { user_id: userId, chatbot_id: fx.a.chatbotId, refresh_token: refreshToken },
    { "user-agent": userAgent },
  );
  expect(r.status).toBe(200);
}

describe("a session's last use", () => {
  it("moves on a refresh a minute or more after the recorded one, or from another User-Agent; not within it", async () => {
    const t = await issueTokens(fx.s.url, fx.a, "last-use-user");
    await refresh("last-use-user", t.refresh_token, "Shop/1.0");
    const first = await session("last-use-user");
    expect(first.user_agent).toBe("Shop/1.0");
    fx.s.clock.advance(30_000);
    await refresh("last-use-user", t.refresh_token, "Shop/1.0");
    expect((await session("last-use-user")).last_used_at).toBe(first.last_used_at);
    await refresh("last-use-user", t.refresh_token, "Shop/2.0");
    const other = await session("last-use-user");
    expect(other.user_agent).toBe("Shop/2.0");
    expect(Date.parse(other.last_used_at) - Date.parse(first.last_used_at)).toBeGreaterThanOrEqual(30_000);
    fx.s.clock.advance(60_000);
    await refresh("last-use-user", t.refresh_token, "Shop/2.0");
    const later = await session("last-use-user");
    expect(Date.parse(later.last_used_at) - Date.parse(other.last_used_at)).toBeGreaterThanOrEqual(60_000);
  });
});
