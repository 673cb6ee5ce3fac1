import { fsync as realFsync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Fsync } from "../../src/storage/sqlite/index.js";
import { issueTokens } from "../helpers/flows.js";
import { getJson, type JsonResponse, postJson } from "../helpers/http.js";
import { NdjsonReader, openNdjson } from "../helpers/ndjson.js";
import { startServer, type TestAccount, type TestServer } from "../helpers/server.js";
import { sqliteDb } from "../helpers/sqlite.js";
import { eventually, WebhookReceiver } from "../helpers/webhook-receiver.js";
import { expectNoSecrets } from "./support.js";

// With AIAGENT_SYNCHRONOUS=FULL a write is answered only after the log holding it is fsynced. The group commit's
// fsync is swapped for one the test holds, releases or fails: the order of events shows the wait, no clock does.
type Pending = (err: NodeJS.ErrnoException | null) => void;
let mode: "pass" | "hold" = "pass";
const held: Pending[] = [];
let fsyncCalled: (() => void) | undefined;
const fsync: Fsync = (fd, done) => {
  if (mode === "pass") return realFsync(fd, done);
  held.push(done);
  fsyncCalled?.();
};

let s: TestServer;
let a: TestAccount;
let accessToken: string;
const secrets = new Set<string>();

beforeAll(async () => {
  s = await startServer({ overrides: { fsync }, env: { AIAGENT_WEBHOOK_POLL_MS: "20" } });
  a = await s.account();
  accessToken = (await issueTokens(s.url, a, "fsync-user")).access_token;
  secrets.add(a.apiKey).add(a.password).add(accessToken);
});
afterAll(async () => {
  mode = "pass";
  for (const done of held.splice(0)) done(null);
  expectNoSecrets(s.logs, secrets);
  await s.close(true);
});

const messageCount = (content: string) =>
  (sqliteDb(s.app).prepare("SELECT count(*) AS n FROM messages WHERE content = ?").get(content) as { n: number }).n;

const claimedDeliveries = () =>
  (
    sqliteDb(s.app)
      .prepare("SELECT count(*) AS n FROM webhook_deliveries WHERE account_id = ? AND lease_until IS NOT NULL")
      .get(a.accountId) as { n: number }
  ).n;

/** Starts a write with the fsync held; resolves once the fsync is waiting, failing if the answer came first. */
async function writeHeld(
  write: () => Promise<JsonResponse>,
): Promise<{ answer: Promise<JsonResponse>; answered: () => boolean }> {
  mode = "hold";
  const called = new Promise<void>((r) => (fsyncCalled = r));
  let done = false;
  const answer = write().finally(() => (done = true));
  const first = await Promise.race([called.then(() => "fsync" as const), answer.then(() => "answer" as const)]);
  expect(first, "the write was answered before its fsync began").toBe("fsync");
  return { answer, answered: () => done };
}

const sendMessage = (content: string) =>
  postJson(s.url, `/ai_agent/send_message?access_token=${encodeURIComponent(accessToken)}`, { content });
const getAccessToken = () =>
  postJson(s.url, "/ai_agent/get_access_token", {
    user_id: "fsync-user",
    chatbot_id: a.chatbotId,
    client_api_key: a.apiKey,
  });

describe("an acknowledged write is on disk", () => {
  it("send_message is committed, but not answered while the fsync is held; released, it is answered 200", async () => {
    const { answer, answered } = await writeHeld(() => sendMessage("held by the fsync"));
    expect(messageCount("held by the fsync")).toBe(1);
    // The server goes on serving (a route that writes nothing and waits for nothing) while the write waits.
    expect((await getJson(s.url, "/.well-known/jwks.json")).status).toBe(200);
    expect((await getJson(s.url, "/healthz")).status).toBe(200);
    expect(answered()).toBe(false);
    expect(held.length).toBeGreaterThan(0);
    mode = "pass";
    for (const done of held.splice(0)) done(null);
    const r = await answer;
    expect(r.status).toBe(200);
    expect(r.body.data.user_message.content).toBe("held by the fsync");
  });

  it("send_message_stream: no streamed item leaves before its write is on disk", async () => {
    // The first item (the customer's message) is the one a removed wait in durableStream would let out early.
    const first = async (): Promise<JsonResponse> => {
      const r = await fetch(`${s.url}/ai_agent/send_message_stream?access_token=${encodeURIComponent(accessToken)}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ content: "streamed, held by the fsync" }),
      });
      const line = await new NdjsonReader(r).next();
      return { status: r.status, headers: r.headers, body: line } as JsonResponse;
    };
    const { answer, answered } = await writeHeld(first);
    expect(messageCount("streamed, held by the fsync")).toBe(1);
    // Round trips the server answers meanwhile: had the item left, it would have arrived by now.
    for (let i = 0; i < 3; i++) expect((await getJson(s.url, "/healthz")).status).toBe(200);
    expect(answered(), "a streamed item was sent before its fsync").toBe(false);
    mode = "pass";
    for (const done of held.splice(0)) done(null);
    const r = await answer;
    expect(r.status).toBe(200);
    expect(JSON.stringify(r.body)).toContain("streamed, held by the fsync");
  });

  it("a watcher is sent a message only once its write is on disk (hints wake it at once; the item waits)", async () => {
    const id = (await postJson(s.url, "/get_id_token", { user_email_id: a.email, client_api_key: a.apiKey })).body.data
      .idToken as string;
    secrets.add(id);
    const inbox = await openNdjson(`${s.url}/watch_account?user_email_id=${encodeURIComponent(a.email)}`, {
      authorization: `Bearer ${id}`,
    });
    expect((await inbox.next())?.result?.subscribed_at).toBeTruthy();
    let seen: string | undefined;
    const next = inbox.next().then((l) => (seen = JSON.stringify(l)));
    const { answer } = await writeHeld(() => sendMessage("watched, held by the fsync"));
    expect(messageCount("watched, held by the fsync")).toBe(1);
    // Round trips the server answers meanwhile: had the watcher's item left, it would have arrived by now.
    for (let i = 0; i < 3; i++) expect((await getJson(s.url, "/healthz")).status).toBe(200);
    expect(seen, "a watched item was sent before its fsync").toBeUndefined();
    mode = "pass";
    for (const done of held.splice(0)) done(null);
    await next;
    expect(seen).toContain("watched, held by the fsync");
    expect((await answer).status).toBe(200);
    await inbox.cancel();
  });

  it("get_access_token (a refresh token written) waits for the fsync too", async () => {
    const { answer, answered } = await writeHeld(getAccessToken);
    expect((await getJson(s.url, "/healthz")).status).toBe(200);
    expect(answered()).toBe(false);
    mode = "pass";
    for (const done of held.splice(0)) done(null);
    const r = await answer;
    expect(r.status).toBe(200);
    secrets.add(r.body.data.access_token).add(r.body.data.refresh_token);
  });

  it("a failed fsync is answered 503 with Retry-After, not 200; the next write, synced, is answered 200", async () => {
    const { answer } = await writeHeld(() => sendMessage("its fsync fails"));
    mode = "pass";
    for (const done of held.splice(0))
      done(Object.assign(new Error("EIO: i/o error, fsync"), { code: "EIO", errno: -5, syscall: "fsync" }));
    const r = await answer;
    expect(r.status).toBe(503);
    expect(r.headers.get("retry-after")).toMatch(/^\d+$/);
    expect(r.body.code).toBe("unavailable");
    const next = await sendMessage("synced");
    expect(next.status).toBe(200);
  });

  it("a webhook is sent only once its change is on disk: none arrives while the fsync is held", async () => {
    // Last in the file: the dispatcher's own writes after this (the delivery recorded) are fsynced too, and would be
    // the held ones of a later test.
    const receiver = new WebhookReceiver();
    await receiver.up();
    try {
      const id = (await postJson(s.url, "/get_id_token", { user_email_id: a.email, client_api_key: a.apiKey })).body
        .data.idToken as string;
      secrets.add(id);
      const ep = await postJson(
        s.url,
        "/v1/account/webhooks",
        { url: receiver.url, event_types: ["message.created"] },
        { authorization: `Bearer ${id}` },
      );
      expect(ep.status).toBe(200);
      secrets.add(ep.body.data.secret);
      // Whether the change's fsync had completed when each delivery arrived.
      let synced = false;
      const respond = receiver.respond;
      const onDisk: boolean[] = [];
      receiver.respond = (n) => {
        onDisk.push(synced);
        return respond(n);
      };
      const { answer } = await writeHeld(() => sendMessage("webhooked, held by the fsync"));
      expect(messageCount("webhooked, held by the fsync")).toBe(1);
      // The dispatcher has seen the change and claimed its delivery; only the fsync stands between it and the receiver.
      await eventually("the delivery claimed", () => claimedDeliveries() > 0);
      // Round trips the server answers meanwhile: had the delivery left, it would have arrived by now.
      for (let i = 0; i < 3; i++) expect((await getJson(s.url, "/healthz")).status).toBe(200);
      expect(receiver.seen, "a webhook was sent before its change was on disk").toEqual([]);
      mode = "pass";
      synced = true;
      for (const done of held.splice(0)) done(null);
      expect((await answer).status).toBe(200);
      await eventually("the webhook delivered", () => receiver.accepted().length > 0);
      expect(onDisk.every(Boolean), "a delivery arrived while its change's fsync was held").toBe(true);
      expect(receiver.accepted()[0]!.body).toContain("webhooked, held by the fsync");
    } finally {
      await receiver.down();
    }
  });
});
