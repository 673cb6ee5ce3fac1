import { afterAll, describe, expect, it } from "vitest";
import { serverForFile } from "../helpers/file-server.js";
import { addMember, issueTokens, send } from "../helpers/flows.js";
import { getJson, postJson } from "../helpers/http.js";
import { type NdjsonReader, openNdjson } from "../helpers/ndjson.js";
import { waitFor } from "../helpers/time-scale.js";

// Issue 45, routing: auto-assignment per team. A conversation the AI agent hands over goes to a member of the team
// its chatbot is given who is online (the console's inbox stream open) and not away: balanced by open
// conversations, under the team's capacity. When nobody can take it, it waits, and is assigned once someone frees
// up. Each assignment is a timeline line, a conversation.assigned event and an audit entry. Runs on SQLite and on
// PostgreSQL (ON_POSTGRES).

const fx = serverForFile({ accounts: 1, idTokens: true });
const bearer = (t: string) => ({ authorization: `Bearer ${t}` });
const streams: NdjsonReader[] = [];
afterAll(async () => {
  for (const r of streams) await r.cancel().catch(() => undefined);
});

/** Opens the person's inbox stream (they are online while it is open). */
async function online(token: string): Promise<void> {
  const r = await openNdjson(`${fx.s.url}/watch_account?${new URLSearchParams({ user_email_id: fx.a.email })}`, {
    authorization: `Bearer ${token}`,
  });
  streams.push(r);
  expect((await r.next())?.result?.subscribed_at).toBeDefined();
}

describe("auto-assignment", () => {
  it("gives handovers to online members by load under the capacity, skips the offline and the away, waits when full", async () => {
    const { s, authA } = fx;
    const sam = await addMember(s.url, fx.idA, "sam@route.example");
    const bea = await addMember(s.url, fx.idA, "bea@route.example");
    const kim = await addMember(s.url, fx.idA, "kim@route.example");
    const team = await postJson(
      s.url,
      "/v1/account/teams",
      {
        name: "Support",
        member_ids: [sam.memberId, bea.memberId, kim.memberId],
        chatbot_ids: [fx.a.chatbotId],
        assignment: "balanced",
        capacity: 1,
      },
      authA,
    );
    expect(team.status).toBe(200);
    // Sam and Bea have the inbox open; Kim does not (offline: skipped).
    await online(sam.idToken);
    await online(bea.idToken);

    const holder = async (conversationId: string) =>
      (
        await getJson(s.url, "/list_conversation_activity", { conversation_id: conversationId }, authA)
      ).body.data.activities
        .filter((l: { kind: string }) => l.kind === "assigned")
        .map((l: { to_email: string }) => l.to_email);
    const handOver = async (who: string) => {
      const t = await issueTokens(s.url, fx.a, who);
      return (await send(s.url, t.access_token, "I want to talk to a person please")).conversation_id;
    };
    const first = await handOver("route-1");
    await waitFor("the first handover assigned", async () => (await holder(first)).length === 1);
    const second = await handOver("route-2");
    await waitFor("the second handover assigned", async () => (await holder(second)).length === 1);
    // Balanced, capacity 1: one each, never Kim.
    const [a1] = await holder(first);
    const [a2] = await holder(second);
    expect(new Set([a1, a2])).toEqual(new Set(["sam@route.example", "bea@route.example"]));

    // Both are full: the third waits unassigned. Bea goes away; Sam closes his conversation and frees a place: it
    // goes to Sam (Bea is away, Kim offline).
    const third = await handOver("route-3");
    const away = await postJson(s.url, "/v1/account/availability", { away: true }, bearer(bea.idToken));
    expect(away.body.data).toEqual({ away: true });
    const samsOwn = a1 === "sam@route.example" ? first : second;
    const bea1 = a1 === "sam@route.example" ? second : first;
    await postJson(s.url, "/close_conversation", { conversation_id: samsOwn }, bearer(sam.idToken));
    await waitFor("the waiting conversation assigned", async () => (await holder(third)).length === 1);
    expect(await holder(third)).toEqual(["sam@route.example"]);
    // It waited: its assignment came after the close that freed Sam.
    const log = await getJson(s.url, "/v1/account/events", { limit: 1000 }, authA);
    const seqOf = (type: string, id: string) =>
      log.body.data.events.find((e: any) => e.type === type && e.data.conversation_id === id)?.cursor;
    expect(Number(seqOf("conversation.assigned", third))).toBeGreaterThan(
      Number(seqOf("conversation.closed", samsOwn)),
    );

    // The timeline says who and how, the conversation is held, the audit log has it.
    const lines = (await getJson(s.url, "/list_conversation_activity", { conversation_id: third }, authA)).body.data
      .activities;
    expect(lines.find((l: { kind: string }) => l.kind === "assigned")).toMatchObject({
      actor_name: "Auto-assignment (Support)",
      from_name: "AI agent",
      to_email: "sam@route.example",
    });
    const audit = await getJson(s.url, "/v1/account/audit_events", { limit: 500 }, authA);
    const auto = audit.body.data.audit_events.filter(
      (e: { kind: string; actor: string }) => e.kind === "conversation.assigned" && e.actor === "auto-assignment",
    );
    expect(auto.map((e: { target: string }) => e.target).sort()).toEqual([first, second, third].sort());
    // Bea, away, still holds hers; nobody assigned Kim anything.
    expect(await holder(bea1)).toEqual(["bea@route.example"]);
    for (const id of [first, second, third]) expect(await holder(id)).not.toContain("kim@route.example");
    expect((await getJson(s.url, "/v1/account/availability", {}, bearer(bea.idToken))).body.data).toEqual({
      away: true,
    });
  });
});
