import { randomUUID } from "node:crypto";
import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, test } from "vitest";
import { serverForFile } from "../helpers/file-server.js";
import { issueTokens, send } from "../helpers/flows.js";
import { getJson, postJson } from "../helpers/http.js";
import { rpcClients } from "../helpers/rpc.js";

// A write sent again with the key of its first sending (its answer lost) is answered again, never written twice.
const fx = serverForFile({ accounts: 2, idTokens: true });

const sendKeyed = (token: string, body: Record<string, string>, key: string) =>
  postJson(fx.s.url, `/ai_agent/send_message?access_token=${encodeURIComponent(token)}`, body, {
    "idempotency-key": key,
  });

async function contents(id: string, conversationId: string): Promise<string[]> {
  const m = await getJson(
    fx.s.url,
    "/get_messages_for_conversation",
    { conversation_id: conversationId, limit: 100 },
    { authorization: `Bearer ${id}` },
  );
  return m.body.messages.map((x: { content: string }) => x.content);
}

describe("idempotency keys", () => {
  test("send_message again with its Idempotency-Key answers the first answer and stores nothing new", async () => {
    const t = await issueTokens(fx.s.url, fx.a, "idem-1");
    const key = randomUUID();
    const first = await sendKeyed(t.access_token, { content: "only once" }, key);
    expect(first.status).toBe(200);
    const again = await sendKeyed(t.access_token, { content: "only once" }, key);
    expect(again.status).toBe(200);
    expect(again.body.data.conversation_id).toBe(first.body.data.conversation_id);
    expect(again.body.data.user_message.message_id).toBe(first.body.data.user_message.message_id);
    expect(again.body.data.reply.message_id).toBe(first.body.data.reply.message_id);
    const cid = first.body.data.conversation_id;
    expect((await contents(fx.idA, cid)).filter((c) => c === "only once")).toHaveLength(1);
    expect(await contents(fx.idA, cid)).toHaveLength(2);
    // The key as a body field (Connect/gRPC's way) names the same write.
    const byField = await postJson(
      fx.s.url,
      `/ai_agent/send_message?access_token=${encodeURIComponent(t.access_token)}`,
      {
        content: "only once",
        idempotency_key: key,
      },
    );
    expect(byField.body.data?.user_message.message_id).toBe(first.body.data.user_message.message_id);
  });

  test("the same key with another body is refused 409 already_exists, naming the field, and writes nothing", async () => {
    const t = await issueTokens(fx.s.url, fx.a, "idem-2");
    const key = randomUUID();
    const first = await sendKeyed(t.access_token, { content: "first body" }, key);
    const cid = first.body.data.conversation_id;
    const other = await sendKeyed(t.access_token, { conversation_id: cid, content: "another body" }, key);
    expect(other.status).toBe(409);
    expect(other.body.code).toBe("already_exists");
    expect(other.body.message).toMatch(/idempotency_key/);
    expect(await contents(fx.idA, cid)).toEqual(["first body", expect.any(String)]);
  });

  test("without a key each send is a new message (keys are opt-in)", async () => {
    const t = await issueTokens(fx.s.url, fx.a, "idem-3");
    const c = await send(fx.s.url, t.access_token, "twice");
    await send(fx.s.url, t.access_token, "twice", c.conversation_id);
    expect((await contents(fx.idA, c.conversation_id)).filter((x) => x === "twice")).toHaveLength(2);
  });

  test("an operator's reply, take over, hand back and close, each sent twice with its key, happen once", async () => {
    const t = await issueTokens(fx.s.url, fx.a, "idem-4");
    const c = await send(fx.s.url, t.access_token, "help");
    const cid = c.conversation_id;
    const auth = (key: string) => ({ authorization: `Bearer ${fx.idA}`, "idempotency-key": key });
    const take = randomUUID();
    const took = await postJson(fx.s.url, "/take_over_conversation", { conversation_id: cid }, auth(take));
    expect(took.status).toBe(200);
    const reply = randomUUID();
    const r1 = await postJson(
      fx.s.url,
      "/reply_to_conversation",
      { conversation_id: cid, content: "on it" },
      auth(reply),
    );
    const r2 = await postJson(
      fx.s.url,
      "/reply_to_conversation",
      { conversation_id: cid, content: "on it" },
      auth(reply),
    );
    expect(r2.status).toBe(200);
    expect(r2.body.data.message_id).toBe(r1.body.data.message_id);
    const release = randomUUID();
    const rel = await postJson(fx.s.url, "/release_conversation", { conversation_id: cid }, auth(release));
    const close = randomUUID();
    const c1 = await postJson(fx.s.url, "/close_conversation", { conversation_id: cid }, auth(close));
    expect(c1.body.data.status).toBe("closed");
    // Retried after later changes: the first answers, and no change is made again (still closed, not taken).
    const took2 = await postJson(fx.s.url, "/take_over_conversation", { conversation_id: cid }, auth(take));
    expect(took2.body.data).toEqual(took.body.data);
    const rel2 = await postJson(fx.s.url, "/release_conversation", { conversation_id: cid }, auth(release));
    expect(rel2.body.data).toEqual(rel.body.data);
    // A reply to the now closed conversation, retried with its key, answers its first answer (not "closed").
    const r3 = await postJson(
      fx.s.url,
      "/reply_to_conversation",
      { conversation_id: cid, content: "on it" },
      auth(reply),
    );
    expect(r3.body.data?.message_id).toBe(r1.body.data.message_id);
    expect((await contents(fx.idA, cid)).filter((x) => x === "on it")).toHaveLength(1);
    const state = await postJson(fx.s.url, "/reopen_conversation", { conversation_id: cid }, auth(randomUUID()));
    expect(state.body.data.assigned_to).toBe("ai_agent");
  });

  test("a key never crosses callers: the same key and body from another account or customer is its own write", async () => {
    const key = randomUUID();
    const ta = await issueTokens(fx.s.url, fx.a, "idem-bola");
    const tb = await issueTokens(fx.s.url, fx.b, "idem-bola");
    const ta2 = await issueTokens(fx.s.url, fx.a, "idem-bola-2");
    const fromA = await sendKeyed(ta.access_token, { content: "same words" }, key);
    const fromB = await sendKeyed(tb.access_token, { content: "same words" }, key);
    const fromA2 = await sendKeyed(ta2.access_token, { content: "same words" }, key);
    for (const r of [fromB, fromA2]) {
      expect(r.status).toBe(200);
      expect(r.body.data.conversation_id).not.toBe(fromA.body.data.conversation_id);
      expect(r.body.data.user_message.message_id).not.toBe(fromA.body.data.user_message.message_id);
    }
    // The operators' keys too: B's reply with A's key is B's own.
    const convA = fromA.body.data.conversation_id;
    const convB = fromB.body.data.conversation_id;
    const replyKey = randomUUID();
    const ra = await postJson(
      fx.s.url,
      "/reply_to_conversation",
      { conversation_id: convA, content: "hi" },
      { authorization: `Bearer ${fx.idA}`, "idempotency-key": replyKey },
    );
    const rb = await postJson(
      fx.s.url,
      "/reply_to_conversation",
      { conversation_id: convB, content: "hi" },
      { authorization: `Bearer ${fx.idB}`, "idempotency-key": replyKey },
    );
    expect(rb.status).toBe(200);
    expect(rb.body.data.conversation_id).toBe(convB);
    expect(rb.body.data.message_id).not.toBe(ra.body.data.message_id);
  });

  test.each([
    ["with spaces", "a key with spaces"],
    ["too long", "k".repeat(256)],
    ["not ASCII", "clé-ünicode"],
  ])("a bad key (%s) is refused 400 naming idempotency_key, nothing written", async (_, key) => {
    const t = await issueTokens(fx.s.url, fx.a, `idem-bad-${key.length}`);
    const r = await postJson(fx.s.url, `/ai_agent/send_message?access_token=${encodeURIComponent(t.access_token)}`, {
      content: "refused",
      idempotency_key: key,
    });
    expect(r.status).toBe(400);
    expect(r.body.code).toBe("invalid_argument");
    expect(r.body.message).toMatch(/^idempotency_key/);
  });

  test("the header and the field, both given and different, are refused 400", async () => {
    const t = await issueTokens(fx.s.url, fx.a, "idem-both");
    const r = await postJson(
      fx.s.url,
      `/ai_agent/send_message?access_token=${encodeURIComponent(t.access_token)}`,
      { content: "which?", idempotency_key: "one" },
      { "idempotency-key": "two" },
    );
    expect(r.status).toBe(400);
    expect(r.body.message).toMatch(/idempotency_key/);
  });

  test.each(["connect-json", "grpc"] as const)("over %s the request field does the same", async (protocol) => {
    const { conversations } = rpcClients(fx.s.url, protocol);
    const t = await issueTokens(fx.s.url, fx.a, `idem-rpc-${protocol}`);
    const headers = { authorization: `Bearer ${t.access_token}` };
    const key = randomUUID();
    const first = await conversations.sendMessage({ content: "rpc once", idempotencyKey: key }, { headers });
    const again = await conversations.sendMessage({ content: "rpc once", idempotencyKey: key }, { headers });
    expect(again.data?.userMessage?.messageId).toBe(first.data?.userMessage?.messageId);
    const refused = await conversations
      .sendMessage({ content: "rpc other", idempotencyKey: key }, { headers })
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ConnectError);
    expect((refused as ConnectError).code).toBe(Code.AlreadyExists);
    // The stream form replays the same two items.
    const items: string[] = [];
    for await (const ev of conversations.sendMessageStream({ content: "rpc once", idempotencyKey: key }, { headers }))
      if (ev.event.case === "userMessage" || ev.event.case === "reply") items.push(ev.event.value.messageId);
    expect(items).toEqual([first.data?.userMessage?.messageId, first.data?.reply?.messageId]);
  });
});
