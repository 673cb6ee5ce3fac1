import { describe, expect, it } from "vitest";
import { serverForFile } from "../helpers/file-server.js";
import { addMember, contacts, issueTokens, send } from "../helpers/flows.js";
import { getJson, postJson, requestJson } from "../helpers/http.js";

// Issue 45, routing: teams. Admins create, rename and delete teams, set their members and the chatbots they are
// given; an operator sees the conversations of their teams' chatbots and of chatbots given to no team (lists, search,
// reads, the account's stream); admins see everything; each change is in the audit log. Runs on SQLite and on
// PostgreSQL (ON_POSTGRES).

const fx = serverForFile({ accounts: 2, idTokens: true });
const bearer = (t: string) => ({ authorization: `Bearer ${t}` });

describe("teams", () => {
  it("admins manage teams; an operator of team A cannot read team B's chatbot's conversations, an admin can", async () => {
    const { s, authA } = fx;
    const botB = await postJson(
      s.url,
      "/v1/account/chatbots",
      { name: "Billing desk", allowed_origins: ["https://billing.example"] },
      authA,
    );
    expect(botB.status).toBe(200);
    const billingBot = botB.body.data.chatbot_id as string;
    const sam = await addMember(s.url, fx.idA, "sam@teams.example");
    const bea = await addMember(s.url, fx.idA, "bea@teams.example");

    // Before any team, every operator sees every chatbot's conversation (as accounts without teams always did).
    const shopper = await issueTokens(s.url, fx.a, "shop-customer");
    const shop = await send(s.url, shopper.access_token, "Where is parcel zebra-7?");
    const payer = await issueTokens(s.url, { ...fx.a, chatbotId: billingBot }, "billing-customer");
    const billing = await send(s.url, payer.access_token, "My invoice zebra-8 is wrong");
    const seen = async (token: string) =>
      (await contacts(s.url, token, fx.a.email)).body.data.data.contacts
        .map((c: any) => c.latest_conversation_id)
        .sort();
    expect(await seen(sam.idToken)).toEqual([shop.conversation_id, billing.conversation_id].sort());

    const sales = await postJson(
      s.url,
      "/v1/account/teams",
      { name: "Sales", member_ids: [sam.memberId], chatbot_ids: [fx.a.chatbotId] },
      authA,
    );
    expect(sales.status).toBe(200);
    expect(sales.body.data).toMatchObject({
      name: "Sales",
      member_ids: [sam.memberId],
      chatbot_ids: [fx.a.chatbotId],
      assignment: "off",
      capacity: 0,
    });
    const salesId = sales.body.data.team_id as string;
    const support = await postJson(
      s.url,
      "/v1/account/teams",
      { name: "Billing", member_ids: [bea.memberId], chatbot_ids: [billingBot], assignment: "balanced", capacity: 2 },
      authA,
    );
    expect(support.status).toBe(200);
    const billingTeam = support.body.data.team_id as string;

    // The rules of the input: a name unique in the account, a chatbot one team's, a known way of assigning.
    expect((await postJson(s.url, "/v1/account/teams", { name: "sales" }, authA)).status).toBe(409);
    const twice = await postJson(s.url, "/v1/account/teams", { name: "Other", chatbot_ids: [billingBot] }, authA);
    expect(twice.status).toBe(409);
    expect(JSON.stringify(twice.body)).toContain("chatbot_ids");
    const bad = await postJson(s.url, "/v1/account/teams", { name: "Other", assignment: "random" }, authA);
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toContain("assignment");
    const badCap = await postJson(s.url, "/v1/account/teams", { name: "Other", capacity: -1 }, authA);
    expect(badCap.status).toBe(400);
    expect(JSON.stringify(badCap.body)).toContain("capacity");
    expect((await postJson(s.url, "/v1/account/teams", { name: "" }, authA)).status).toBe(400);
    // Operators list teams and change none.
    expect((await postJson(s.url, "/v1/account/teams", { name: "Mine" }, bearer(sam.idToken))).status).toBe(403);
    const listed = await getJson(s.url, "/v1/account/teams", {}, bearer(sam.idToken));
    expect(listed.body.data.teams.map((t: { name: string }) => t.name)).toEqual(["Billing", "Sales"]);

    // Sam (Sales) sees the shop's conversation only; Bea (Billing) the billing one only; the owner (admin) both.
    expect(await seen(sam.idToken)).toEqual([shop.conversation_id]);
    expect(await seen(bea.idToken)).toEqual([billing.conversation_id]);
    expect(await seen(fx.idA)).toEqual([shop.conversation_id, billing.conversation_id].sort());
    // Reading another team's conversation answers as one that does not exist: messages, timeline, take-over.
    const read = await getJson(
      s.url,
      "/get_messages_for_conversation",
      { conversation_id: billing.conversation_id },
      bearer(sam.idToken),
    );
    expect(read.status).toBe(404);
    const timeline = await getJson(
      s.url,
      "/list_conversation_activity",
      { conversation_id: billing.conversation_id },
      bearer(sam.idToken),
    );
    expect(timeline.status).toBe(404);
    const take = await postJson(
      s.url,
      "/take_over_conversation",
      { conversation_id: billing.conversation_id },
      bearer(sam.idToken),
    );
    expect(take.status).toBe(404);
    expect(
      (
        await getJson(
          s.url,
          "/get_messages_for_conversation",
          { conversation_id: billing.conversation_id },
          bearer(bea.idToken),
        )
      ).status,
    ).toBe(200);
    // The search finds nothing of it either.
    const found = async (token: string) =>
      (await getJson(s.url, "/search_conversations", { query: "zebra" }, bearer(token))).body.data.results.map(
        (r: any) => r.conversation_id,
      );
    expect(await found(sam.idToken)).toEqual([shop.conversation_id]);
    expect(new Set(await found(fx.idA)).size).toBe(2);

    // Renamed, then Sam joins Billing too: he sees both; the chatbots taken from Sales: Sales' chatbot is no team's.
    const renamed = await requestJson(s.url, "PATCH", `/v1/account/teams/${billingTeam}`, authA, {
      name: "Billing & refunds",
      assignment: "round_robin",
    });
    expect(renamed.body.data).toMatchObject({ name: "Billing & refunds", assignment: "round_robin", capacity: 2 });
    const members = await requestJson(s.url, "POST", `/v1/account/teams/${billingTeam}/members`, authA, {
      member_ids: [bea.memberId, sam.memberId],
    });
    expect(members.status).toBe(200);
    expect(await seen(sam.idToken)).toEqual([shop.conversation_id, billing.conversation_id].sort());
    await requestJson(s.url, "POST", `/v1/account/teams/${salesId}/chatbots`, authA, { chatbot_ids: [] });
    expect(await seen(bea.idToken)).toEqual([shop.conversation_id, billing.conversation_id].sort());
    // A member id of nobody in the account is not found, as any id of nothing is, naming the field; nothing changes.
    const stranger = await requestJson(s.url, "POST", `/v1/account/teams/${salesId}/members`, authA, {
      member_ids: ["00000000-0000-4000-8000-000000000000"],
    });
    expect(stranger.status).toBe(404);
    expect(JSON.stringify(stranger.body)).toContain("member_ids");
    // Deleted: its chatbot is no team's, every operator sees it.
    expect((await requestJson(s.url, "DELETE", `/v1/account/teams/${billingTeam}`, authA)).status).toBe(200);
    await requestJson(s.url, "POST", `/v1/account/teams/${salesId}/members`, authA, { member_ids: [] });
    expect(await seen(bea.idToken)).toEqual([shop.conversation_id, billing.conversation_id].sort());

    // Every change is in the audit log.
    const audit = await getJson(s.url, "/v1/account/audit_events", { limit: 500 }, authA);
    const kinds = audit.body.data.audit_events.map((e: { kind: string }) => e.kind);
    expect(kinds.filter((k: string) => k === "team.created")).toHaveLength(2);
    expect(kinds).toContain("team.updated");
    expect(kinds).toContain("team.deleted");

    // Another account's teams are out of reach: not found, never changed.
    const theirs = await requestJson(s.url, "PATCH", `/v1/account/teams/${salesId}`, fx.authB, { name: "Mine" });
    expect(theirs.status).toBe(404);
    expect((await getJson(s.url, "/v1/account/teams", {}, fx.authB)).body.data.teams).toEqual([]);
  });
});
