import { afterAll, describe, expect, it } from "vitest";
import { idToken, issueTokens, send } from "../helpers/flows.js";
import { getJson, postJson } from "../helpers/http.js";
import { startInstances } from "../helpers/instances.js";
import { isHeartbeat, type NdjsonReader, openNdjson } from "../helpers/ndjson.js";
import { postgresSkipReason } from "../helpers/postgres.js";
import { createTestAccount, startServer, type TestAccount } from "../helpers/server.js";
import { scaled } from "../helpers/time-scale.js";
import { eventually, WebhookReceiver } from "../helpers/webhook-receiver.js";

// One event path: a change is recorded once, in the event log, and the log (ListEvents), a webhook receiver and the
// watchers (watch_account, watch_conversation) all follow that record, so they see the same events in the same
// order. The dispatcher polls only once a minute here: deliveries that arrive are woken by the log's announcement.
// The streams are sent a heartbeat (the cursor of their last event, no event) every 100 ms, as every 25 s on a run
// that long: the watchers' events are read among them, never counting one as an event.
const ENV = { AIAGENT_WEBHOOK_POLL_MS: "60000", AIAGENT_STREAM_HEARTBEAT_MS: "100" };
const twoInstancesSkip = process.env.AIAGENT_TEST_BACKEND
  ? "runs once, in the default project"
  : await postgresSkipReason();
const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c().catch(() => undefined);
});

const auth = (token: string) => ({ authorization: `Bearer ${token}` });
/** The event types a watcher is sent (docs/live-updates.md); the others reach webhooks and the log only. */
const WATCHED = new Set([
  "message.created",
  "conversation.assigned",
  "conversation.closed",
  "conversation.reopened",
  "conversation.read",
]);

/** The cursor of the last event read from each stream: what its heartbeats carry. */
const lastCursor = new WeakMap<NdjsonReader, string>();

/**
 * The next `n` events of a stream, or a failure naming how many came within `ms`: by default well within the
 * 10 s a watcher waits before looking at the log without a hint, so what arrives was woken by the announcement.
 * Heartbeats are passed over, as a client does: each carries the cursor of the event before it (resuming from it
 * skips nothing).
 */
async function take(r: NdjsonReader, n: number, ms = 5000): Promise<any[]> {
  const out: any[] = [];
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`only ${out.length} of ${n} stream events within ${ms} ms`)), ms);
  });
  try {
    while (out.length < n) {
      const line = await Promise.race([r.next(), late]);
      if (!line?.result) throw new Error(`expected a result, got ${JSON.stringify(line)}`);
      if (isHeartbeat(line)) {
        expect(line.result.cursor, "a heartbeat's cursor").toBe(lastCursor.get(r));
        continue;
      }
      lastCursor.set(r, line.result.cursor);
      out.push(line.result);
    }
    return out;
  } finally {
    clearTimeout(timer);
  }
}

/** What a watcher and the log both say of one event: the message, or the conversation's state. */
function shown(e: { message?: unknown; conversation?: unknown }) {
  return e.message !== undefined ? { message: e.message } : { conversation: e.conversation };
}

/**
 * Writes through `writer` (customers send and the agent answers, an operator takes one conversation over and
 * replies, a customer answers the operator) while `reader` serves the watchers and the log, then compares.
 */
async function scenario(writer: string, reader: string, a: TestAccount) {
  const receiver = new WebhookReceiver();
  await receiver.up();
  cleanups.push(() => receiver.down());
  const admin = await idToken(writer, a);
  const created = await postJson(writer, "/v1/account/webhooks", { url: receiver.url }, auth(admin));
  expect(created.status, JSON.stringify(created.body)).toBe(200);

  // Heartbeats kept: take() checks each carries the cursor of the event before it.
  const inbox = await openNdjson(`${reader}/watch_account?user_email_id=${encodeURIComponent(a.email)}`, auth(admin), {
    heartbeats: true,
  });
  expect(inbox.response.status).toBe(200);
  const [subscribed] = await take(inbox, 1);
  expect(subscribed.subscribed_at).toBeTruthy();

  const alice = await issueTokens(writer, a, "path-alice");
  const bob = await issueTokens(writer, a, "path-bob");
  const c1 = (await send(writer, alice.access_token, "Where is my parcel?")).conversation_id;
  const frame = await openNdjson(
    `${reader}/watch_conversation?${new URLSearchParams({ conversation_id: c1, after_message_order: "0", access_token: alice.access_token })}`,
    {},
    { heartbeats: true },
  );
  expect(frame.response.status).toBe(200);
  const c2 = (await send(writer, bob.access_token, "Do you ship to Oslo?")).conversation_id;
  const body = { conversation_id: c1 };
  const take1 = await postJson(writer, "/take_over_conversation", { ...body, operator_name: "Sam" }, auth(admin));
  expect(take1.status, JSON.stringify(take1.body)).toBe(200);
  const r1 = await postJson(writer, "/reply_to_conversation", { ...body, content: "Sam here." }, auth(admin));
  expect(r1.status, JSON.stringify(r1.body)).toBe(200);
  await send(writer, alice.access_token, "Thanks, Sam", c1);
  await send(writer, bob.access_token, "And to Bergen?", c2);
  const r2 = await postJson(writer, "/reply_to_conversation", { ...body, content: "It left today." }, auth(admin));
  expect(r2.status, JSON.stringify(r2.body)).toBe(200);

  // The log, read where the watchers are: every change, once, in commit order.
  const listed = await getJson(reader, "/v1/account/events", { limit: 1000 }, auth(await idToken(reader, a)));
  expect(listed.status, JSON.stringify(listed.body)).toBe(200);
  const log = listed.body.data.events as any[];
  expect(log.map((e) => `${e.type} ${e.data.conversation_id === c1 ? "c1" : "c2"}`)).toEqual([
    "conversation.started c1",
    "message.created c1",
    "message.created c1",
    "conversation.started c2",
    "message.created c2",
    "message.created c2",
    "conversation.assigned c1",
    // The timeline's line (issue 45): to the log and webhooks, never to a watcher.
    "conversation.activity c1",
    "message.created c1",
    "message.created c1",
    "message.created c2",
    "message.created c2",
    "message.created c1",
  ]);

  // The webhook receiver: every event of the log, each body as the log shows it, in the log's order per
  // conversation (deliveries of different conversations go out side by side).
  await eventually("every event delivered", () => receiver.accepted().length >= log.length, { tries: 600 });
  const hooked = receiver.accepted().map((r) => r.event);
  expect(hooked).toHaveLength(log.length);
  for (const c of [c1, c2])
    expect(hooked.filter((e) => e.data.conversation_id === c)).toEqual(log.filter((e) => e.data.conversation_id === c));
  for (const r of receiver.accepted()) expect(r.headers["webhook-id"]).toBe(r.event.event_id);

  // The account's watcher: the log's watched events, same cursors, same content, same order.
  const watched = log.filter((e) => WATCHED.has(e.type));
  const live = await take(inbox, watched.length);
  expect(live.map((e) => e.cursor)).toEqual(watched.map((e) => e.cursor));
  expect(live.map(shown)).toEqual(watched.map((e) => shown(e.data)));

  // The conversation's watcher: its state, then the conversation's watched events as the log has them.
  const ofC1 = watched.filter((e) => e.data.conversation_id === c1);
  const [state, ...followed] = await take(frame, 1 + ofC1.length);
  expect(state.conversation).toMatchObject({ conversation_id: c1 });
  expect(followed.map(shown)).toEqual(ofC1.map((e) => shown(e.data)));

  await inbox.cancel();
  await frame.cancel();
}

describe("one event path: the log, a webhook receiver and the watchers see the same events", () => {
  it(
    `on one instance (${process.env.AIAGENT_TEST_BACKEND === "postgres" ? "PostgreSQL" : "SQLite"})`,
    async () => {
      const s = await startServer({ env: ENV });
      cleanups.push(() => s.close(true));
      await scenario(s.url, s.url, await s.account());
    },
    scaled(60_000),
  );

  it.skipIf(twoInstancesSkip !== undefined)(
    "across two instances on PostgreSQL: written through one, followed on the other",
    async () => {
      const { instances, stop } = await startInstances(2, ENV);
      cleanups.push(stop);
      const [one, two] = instances as [(typeof instances)[0], (typeof instances)[0]];
      const a = await createTestAccount(one.app, "one-event-path@example.com");
      await scenario(one.url, two.url, a);
    },
    scaled(60_000),
  );
});
