import { describe, expect, it } from "vitest";
import { serverForFile } from "../helpers/file-server.js";
import { addChatbot, addMember, addTeam, issueTokens, send } from "../helpers/flows.js";
import { postJson } from "../helpers/http.js";
import { type NdjsonReader, openNdjson } from "../helpers/ndjson.js";

// Issue 45, "X is viewing": a person of the account with a conversation open in the console says so on
// /send_viewing; the account's other people who may see the conversation get it on their watch_account stream
// (viewing, then left), never the customer and never an operator whose teams do not see the chatbot. Nothing is
// stored. Runs on SQLite and on PostgreSQL (ON_POSTGRES); across two instances: postgres-typing-instances.test.ts.

const fx = serverForFile({ accounts: 2, idTokens: true });
const bearer = (t: string) => ({ authorization: `Bearer ${t}` });
async function inbox(token: string): Promise<NdjsonReader> {
  const r = await openNdjson(
    `${fx.s.url}/watch_account?${new URLSearchParams({ user_email_id: fx.a.email })}`,
    bearer(token),
  );
  expect((await r.next())?.result?.subscribed_at).toBeDefined();
  return r;
}

/** The next viewing event of a stream, skipping the others. */
async function nextViewing(r: NdjsonReader): Promise<any> {
  for (;;) {
    const line = await r.next();
    if (!line?.result) throw new Error(`expected a viewing event, got ${JSON.stringify(line)}`);
    if (line.result.viewing) return line.result.viewing;
  }
}

describe("X is viewing", () => {
  it("reaches the account's people who see the conversation, viewing then left; never the customer or a hidden team", async () => {
    const { s, authA } = fx;
    const bea = await addMember(s.url, fx.idA, "bea@viewing.example");
    const kim = await addMember(s.url, fx.idA, "kim@viewing.example");
    await postJson(s.url, "/v1/account/profile", { display_name: "Bea Stone" }, bearer(bea.idToken));
    // The chatbot is given to a team Kim is not in: Kim does not see its conversations.
    await addTeam(s.url, authA, { name: "Viewers", member_ids: [bea.memberId], chatbot_ids: [fx.a.chatbotId] });
    const t = await issueTokens(s.url, fx.a, "viewing-1");
    const conv = (await send(s.url, t.access_token, "hello")).conversation_id;
    const q = new URLSearchParams({ conversation_id: conv, after_message_order: "2", access_token: t.access_token });
    const frame = await openNdjson(`${s.url}/watch_conversation?${q}`);
    expect((await frame.next())?.result?.conversation).toBeDefined();
    const owner = await inbox(fx.idA);
    const kims = await inbox(kim.idToken);

    const viewed = await postJson(s.url, "/send_viewing", { conversation_id: conv }, bearer(bea.idToken));
    expect(viewed.status).toBe(200);
    expect(viewed.body.expires_in_ms).toBeGreaterThan(0);
    expect(await nextViewing(owner)).toMatchObject({
      conversation_id: conv,
      name: "Bea Stone",
      email: "bea@viewing.example",
      expires_in_ms: viewed.body.expires_in_ms,
    });
    const left = await postJson(s.url, "/send_viewing", { conversation_id: conv, leaving: true }, bearer(bea.idToken));
    expect(left.status).toBe(200);
    expect(await nextViewing(owner)).toMatchObject({ conversation_id: conv, email: "bea@viewing.example", left: true });

    // Kim may not see the conversation: refused as a missing one, and told nothing of it: neither Bea's viewing nor
    // the customer's typing. The customer sees the owner typing only.
    expect((await postJson(s.url, "/send_viewing", { conversation_id: conv }, bearer(kim.idToken))).status).toBe(404);
    await postJson(s.url, "/send_typing", { conversation_id: conv }, authA);
    const onFrame = await frame.next();
    expect(onFrame?.result?.typing).toMatchObject({ from: "operator" });
    expect(onFrame?.result?.viewing).toBeUndefined();
    await postJson(s.url, "/send_typing", { conversation_id: conv, access_token: t.access_token });
    // Then a customer of a chatbot given to no team types: that is the first thing on Kim's stream, the owner gets
    // the hidden one first.
    const open = await addChatbot(s.url, authA, "Open to all");
    const t2 = await issueTokens(s.url, { ...fx.a, chatbotId: open }, "viewing-2");
    const conv2 = (await send(s.url, t2.access_token, "hello there")).conversation_id;
    const typed = async (r: NdjsonReader) => {
      for (;;) {
        const line = await r.next();
        if (!line?.result) throw new Error(`expected a typing event, got ${JSON.stringify(line)}`);
        if (line.result.viewing) throw new Error(`a viewing event: ${JSON.stringify(line)}`);
        if (line.result.typing) return line.result.typing.conversation_id as string;
      }
    };
    expect(await typed(owner)).toBe(conv);
    await postJson(s.url, "/send_typing", { conversation_id: conv2, access_token: t2.access_token });
    expect(await typed(kims)).toBe(conv2);
    await Promise.all([frame, owner, kims].map((r) => r.cancel()));
  });

  it("refuses a bad id naming the field, another account's conversation as a missing one, and customers", async () => {
    const { s, authA } = fx;
    const bad = await postJson(s.url, "/send_viewing", { conversation_id: "not-a-uuid" }, authA);
    expect(bad.status).toBe(400);
    expect(bad.body.message).toContain("conversation_id");
    const tb = await issueTokens(s.url, fx.b, "viewing-b");
    const theirs = (await send(s.url, tb.access_token, "hello")).conversation_id;
    expect((await postJson(s.url, "/send_viewing", { conversation_id: theirs }, authA)).status).toBe(404);
    const byCustomer = await postJson(s.url, "/send_viewing", { conversation_id: theirs }, bearer(tb.access_token));
    expect(byCustomer.status).toBe(401);
  });
});
