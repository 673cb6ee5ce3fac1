import { describe, expect, test } from "vitest";
import { serverForFile } from "../helpers/file-server.js";
import { issueTokens, send } from "../helpers/flows.js";
import { getJson, postJson, reasonOf } from "../helpers/http.js";
import { type NdjsonReader, openNdjson } from "../helpers/ndjson.js";

// Typing indicators both ways (docs/inbox.md): ephemeral signals over the existing watch streams, never stored.
// Runs on SQLite and on PostgreSQL (api-postgres).

const fx = serverForFile({ accounts: 2, idTokens: true });

const bearer = (t: string) => ({ authorization: `Bearer ${t}` });

function typing(conversationId: string, headers: Record<string, string>, query = "") {
  return postJson(fx.s.url, `/send_typing${query}`, { conversation_id: conversationId }, headers);
}

/** The next event of a stream that is not the given kind (skips the state and replayed messages). */
async function nextOf(r: NdjsonReader, kind: string): Promise<any> {
  for (;;) {
    const line = await r.next();
    if (!line?.result) throw new Error(`expected ${kind}, got ${JSON.stringify(line)}`);
    if (line.result[kind]) return line.result;
  }
}

describe("typing indicators", () => {
  test("the customer sees the operator's name typing; operators see the customer typing; nothing is stored", async () => {
    await postJson(fx.s.url, "/v1/account/profile", { display_name: "Sam Operator" }, bearer(fx.idA));
    const t = await issueTokens(fx.s.url, fx.a, "typing-1");
    const conv = (await send(fx.s.url, t.access_token, "hello")).conversation_id;
    const q = new URLSearchParams({ conversation_id: conv, after_message_order: "2", access_token: t.access_token });
    const frame = await openNdjson(`${fx.s.url}/watch_conversation?${q}`);
    const first = await frame.next();
    expect(first?.result?.conversation).toMatchObject({ conversation_id: conv });
    const inbox = await openNdjson(
      `${fx.s.url}/watch_account?user_email_id=${encodeURIComponent(fx.a.email)}`,
      bearer(fx.idA),
    );
    expect((await inbox.next())?.result?.subscribed_at).toBeDefined();

    // The operator types: the frame's stream says who, by display name, and for how long to show it.
    const sent = await typing(conv, bearer(fx.idA));
    expect(sent.status).toBe(200);
    expect(sent.body).toEqual({ forwarded: true });
    const op = await nextOf(frame, "typing");
    expect(op.typing).toEqual({ conversation_id: conv, from: "operator", name: "Sam Operator", expires_in_ms: 5000 });
    expect(op.cursor).toBe(first?.result?.cursor);
    // A second signal of the same side within 2 s is not passed on.
    expect((await typing(conv, bearer(fx.idA))).body).toEqual({ forwarded: false });
    fx.s.clock.advance(2000);
    expect((await typing(conv, bearer(fx.idA))).body).toEqual({ forwarded: true });

    // The customer types (access token as a query parameter, as the frame sends it): the inbox sees it.
    const mine = await typing(conv, {}, `?access_token=${encodeURIComponent(t.access_token)}`);
    expect(mine.body).toEqual({ forwarded: true });
    const user = await nextOf(inbox, "typing");
    expect(user.typing).toMatchObject({ conversation_id: conv, from: "user", name: "" });

    // The frame never hears itself: before the operator's reply it sees only the operator's second signal.
    await postJson(fx.s.url, "/take_over_conversation", { conversation_id: conv }, bearer(fx.idA));
    await postJson(fx.s.url, "/reply_to_conversation", { conversation_id: conv, content: "On it." }, bearer(fx.idA));
    for (;;) {
      const line = await frame.next();
      if (line?.result?.typing) expect(line.result.typing.from).toBe("operator");
      if (line?.result?.message) {
        expect(line.result.message).toMatchObject({ content: "On it.", role: "operator" });
        break;
      }
    }
    // Not stored: the conversation holds the two messages of the send and the reply only.
    const msgs = await getJson(fx.s.url, "/get_messages_for_conversation", { conversation_id: conv }, bearer(fx.idA));
    expect(msgs.body.messages.map((m: { role: string }) => m.role)).toEqual(["user", "assistant", "operator"]);
    await Promise.all([frame.cancel(), inbox.cancel()]);
  });

  test("another account, another customer, no credential and a revoked session are refused", async () => {
    const t = await issueTokens(fx.s.url, fx.a, "typing-2");
    const conv = (await send(fx.s.url, t.access_token, "hello")).conversation_id;
    const other = await issueTokens(fx.s.url, fx.a, "typing-2-other");
    // Another account's or customer's conversation answers as one that does not exist.
    expect((await typing(conv, bearer(fx.idB))).status).toBe(404);
    expect((await typing(conv, bearer(other.access_token))).status).toBe(404);
    expect((await typing(conv, {})).status).toBe(401);
    const bad = await typing("not-a-uuid", bearer(fx.idA));
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toContain("conversation_id");
    // A revoked session's access token is refused like any call.
    const sessions = await getJson(fx.s.url, "/v1/account/sessions", { user_id: "typing-2" }, bearer(fx.idA));
    const sessionId = sessions.body.data.sessions[0].session_id as string;
    expect((await postJson(fx.s.url, `/v1/account/sessions/${sessionId}/revoke`, {}, bearer(fx.idA))).status).toBe(200);
    const revoked = await typing(conv, bearer(t.access_token));
    expect(revoked.status).toBe(401);
    expect(reasonOf(revoked.body)).toBe("TokenRevokedError");
  });
});
