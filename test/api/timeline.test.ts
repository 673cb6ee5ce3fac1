import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addMember, idToken, issueTokens, send } from "../helpers/flows.js";
import { getJson, postJson } from "../helpers/http.js";
import { startServer, type TestServer } from "../helpers/server.js";

// Issue 45, a timeline: every assignment, take-over (from whom, by whom), release, close, reopen and rating is a
// line of the conversation's timeline, by display name, and a conversation.activity event in the log; the events
// that were there before keep their payloads.

let s: TestServer;
beforeAll(async () => {
  s = await startServer();
});
afterAll(() => s.close(true));

const bearer = (t: string) => ({ authorization: `Bearer ${t}` });

describe("the conversation's timeline", () => {
  it("says who took it from whom, assigned, released, closed, reopened and rated it, in the list and the event log", async () => {
    const a = await s.account();
    const owner = await idToken(s.url, a);
    await postJson(s.url, "/v1/account/profile", { display_name: "Sam Lee" }, bearer(owner));
    const bea = await addMember(s.url, owner, "bea@shop.example");
    await postJson(s.url, "/v1/account/profile", { display_name: "Bea Stone" }, bearer(bea.idToken));
    const t = await issueTokens(s.url, a, "timeline-customer");
    const { conversation_id } = await send(s.url, t.access_token, "Where is my order A-1001?");
    const body = { conversation_id };

    expect((await postJson(s.url, "/take_over_conversation", body, bearer(owner))).status).toBe(200);
    // Taking it again changes nothing and says nothing.
    expect((await postJson(s.url, "/take_over_conversation", body, bearer(owner))).status).toBe(200);
    expect((await postJson(s.url, "/take_over_conversation", body, bearer(bea.idToken))).status).toBe(200);
    const assign = { ...body, operator_email: a.email };
    expect((await postJson(s.url, "/take_over_conversation", assign, bearer(bea.idToken))).status).toBe(200);
    expect((await postJson(s.url, "/release_conversation", body, bearer(owner))).status).toBe(200);
    expect((await postJson(s.url, "/close_conversation", body, bearer(bea.idToken))).status).toBe(200);
    const rated = await postJson(
      s.url,
      `/ai_agent/rate_conversation?access_token=${encodeURIComponent(t.access_token)}`,
      { ...body, score: 4, comment: "Quick" },
    );
    expect(rated.status).toBe(200);
    expect((await postJson(s.url, "/reopen_conversation", body, bearer(owner))).status).toBe(200);

    const list = await getJson(s.url, "/list_conversation_activity", body, bearer(bea.idToken));
    expect(list.status).toBe(200);
    const lines = list.body.data.activities;
    expect(lines.map((l: Record<string, string>) => [l.kind, l.actor_name, l.from_name, l.to_name, l.detail])).toEqual([
      ["taken_over", "Sam Lee", "AI agent", "Sam Lee", ""],
      ["taken_over", "Bea Stone", "Sam Lee", "Bea Stone", ""],
      ["assigned", "Bea Stone", "Bea Stone", "Sam Lee", ""],
      ["released", "Sam Lee", "Sam Lee", "AI agent", ""],
      ["closed", "Bea Stone", "", "", ""],
      ["rated", "Customer", "", "", "4"],
      ["reopened", "Sam Lee", "", "", ""],
    ]);
    expect(lines[1]).toMatchObject({
      conversation_id,
      actor_email: "bea@shop.example",
      from_email: a.email,
      to_email: "bea@shop.example",
    });
    expect(lines[3]).toMatchObject({ to_email: "ai_agent" });
    for (const l of lines) expect(Date.parse(l.created_at)).not.toBeNaN();

    // The event log: each line as conversation.activity, beside the events that were there, unchanged.
    const log = await getJson(s.url, "/v1/account/events", { limit: 1000 }, bearer(owner));
    const events = log.body.data.events as { type: string; data: Record<string, any> }[];
    const activity = events.filter((e) => e.type === "conversation.activity");
    expect(activity.map((e) => e.data.activity)).toEqual(lines);
    expect(activity.every((e) => e.data.conversation_id === conversation_id)).toBe(true);
    const assigned = events.filter((e) => e.type === "conversation.assigned");
    expect(assigned.map((e) => e.data.conversation.assigned_to)).toEqual([
      a.email,
      a.email,
      "bea@shop.example",
      a.email,
      "ai_agent",
    ]);
    expect(assigned.every((e) => e.data.activity === undefined)).toBe(true);
    const typed = await getJson(s.url, "/v1/account/events", { types: "conversation.activity" }, bearer(owner));
    expect(typed.body.data.events).toHaveLength(7);
  });

  it("answers another account's conversation as one that does not exist, and names a bad id", async () => {
    const a = await s.account();
    const b = await s.account();
    const t = await issueTokens(s.url, a, "private-customer");
    const { conversation_id } = await send(s.url, t.access_token, "hello");
    await postJson(s.url, "/take_over_conversation", { conversation_id }, bearer(await idToken(s.url, a)));
    const other = await getJson(
      s.url,
      "/list_conversation_activity",
      { conversation_id },
      bearer(await idToken(s.url, b)),
    );
    const missing = await getJson(
      s.url,
      "/list_conversation_activity",
      { conversation_id: crypto.randomUUID() },
      bearer(await idToken(s.url, b)),
    );
    expect(other.status).toBe(404);
    expect(other.body).toEqual(missing.body);
    const bad = await getJson(
      s.url,
      "/list_conversation_activity",
      { conversation_id: "x" },
      bearer(await idToken(s.url, a)),
    );
    expect(bad.status).toBe(400);
    expect(bad.body.message).toContain("conversation_id");
    expect((await getJson(s.url, "/list_conversation_activity", { conversation_id })).status).toBe(401);
    const frame = await getJson(s.url, "/list_conversation_activity", {
      conversation_id,
      access_token: t.access_token,
    });
    expect(frame.status).toBe(401);
  });
});
