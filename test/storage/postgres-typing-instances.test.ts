import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addMember, idToken, issueTokens, send } from "../helpers/flows.js";
import { postJson } from "../helpers/http.js";
import { type Instance, startInstances } from "../helpers/instances.js";
import { type NdjsonReader, openNdjson } from "../helpers/ndjson.js";
import { postgresSkipReason } from "../helpers/postgres.js";
import { createTestAccount, type TestAccount } from "../helpers/server.js";

// Typing signals sent through instance A reach the streams open on instance B (PostgreSQL NOTIFY), both ways; so
// do "X is viewing" signals (issue 45).
const skip = await postgresSkipReason();
if (skip) console.warn(`typing across instances skipped: ${skip}`);

async function nextOf(r: NdjsonReader, kind: "typing" | "viewing"): Promise<any> {
  for (;;) {
    const line = await r.next();
    if (!line?.result) throw new Error(`expected a ${kind} event, got ${JSON.stringify(line)}`);
    if (line.result[kind]) return line.result[kind];
  }
}
const nextTyping = (r: NdjsonReader) => nextOf(r, "typing");

describe.skipIf(skip !== undefined)("typing across two instances on one PostgreSQL", () => {
  let running: Awaited<ReturnType<typeof startInstances>> | undefined;
  let instances: Instance[] = [];
  let acc: TestAccount;
  let admin: string;

  beforeAll(async () => {
    running = await startInstances(2);
    instances = running.instances;
    acc = await createTestAccount(instances[0]!.app, "owner@typing-instances.example");
    admin = await idToken(instances[0]!.url, acc);
  });
  afterAll(() => running?.stop());

  it("the operator typing on A reaches the customer's stream on B; the customer typing on B reaches A's inbox", async () => {
    const [a, b] = instances as [Instance, Instance];
    const auth = { authorization: `Bearer ${admin}` };
    await postJson(a.url, "/v1/account/profile", { display_name: "Robin" }, auth);
    const t = await issueTokens(b.url, acc, "typing-cross");
    const conv = (await send(b.url, t.access_token, "hello")).conversation_id;
    const q = new URLSearchParams({ conversation_id: conv, after_message_order: "2", access_token: t.access_token });
    const frame = await openNdjson(`${b.url}/watch_conversation?${q}`);
    expect((await frame.next())?.result?.conversation).toBeDefined();
    const inbox = await openNdjson(`${a.url}/watch_account?user_email_id=${encodeURIComponent(acc.email)}`, auth);
    expect((await inbox.next())?.result?.subscribed_at).toBeDefined();

    expect((await postJson(a.url, "/send_typing", { conversation_id: conv }, auth)).body).toEqual({ forwarded: true });
    expect(await nextTyping(frame)).toMatchObject({ conversation_id: conv, from: "operator", name: "Robin" });

    const byCustomer = await postJson(b.url, "/send_typing", { conversation_id: conv, access_token: t.access_token });
    expect(byCustomer.body).toEqual({ forwarded: true });
    expect(await nextTyping(inbox)).toMatchObject({ conversation_id: conv, from: "user", name: "" });
    await Promise.all([frame.cancel(), inbox.cancel()]);
  });

  it("a person viewing a conversation on A is shown to another on B's stream, and gone when they leave", async () => {
    const [a, b] = instances as [Instance, Instance];
    const bea = await addMember(a.url, admin, "bea@typing-instances.example");
    await postJson(a.url, "/v1/account/profile", { display_name: "Bea" }, { authorization: `Bearer ${bea.idToken}` });
    const t = await issueTokens(a.url, acc, "viewing-cross");
    const conv = (await send(a.url, t.access_token, "hello")).conversation_id;
    const auth = { authorization: `Bearer ${admin}` };
    const inbox = await openNdjson(`${b.url}/watch_account?user_email_id=${encodeURIComponent(acc.email)}`, auth);
    expect((await inbox.next())?.result?.subscribed_at).toBeDefined();
    const beas = { authorization: `Bearer ${bea.idToken}` };
    expect((await postJson(a.url, "/send_viewing", { conversation_id: conv }, beas)).status).toBe(200);
    expect(await nextOf(inbox, "viewing")).toMatchObject({ conversation_id: conv, name: "Bea", left: false });
    await postJson(a.url, "/send_viewing", { conversation_id: conv, leaving: true }, beas);
    expect(await nextOf(inbox, "viewing")).toMatchObject({ conversation_id: conv, left: true });
    await inbox.cancel();
  });
});
