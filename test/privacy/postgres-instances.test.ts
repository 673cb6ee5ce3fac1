import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { idToken, issueTokens, send } from "../helpers/flows.js";
import { getJson, postJson } from "../helpers/http.js";
import { type Instance, startInstances } from "../helpers/instances.js";
import { postgresSkipReason } from "../helpers/postgres.js";
import { createTestAccount, type TestAccount } from "../helpers/server.js";
import { eventually } from "../helpers/webhook-receiver.js";

// Erasure and retention with two instances of the service on one PostgreSQL database.
const skip = await postgresSkipReason();
if (skip) console.warn(`erasure across instances skipped: ${skip}`);

describe.skipIf(skip !== undefined)("erasure and retention across instances", () => {
  let instances: Instance[] = [];
  let stop: () => Promise<void> = async () => undefined;
  let acc: TestAccount;

  beforeAll(async () => {
    ({ instances, stop } = await startInstances(2));
    acc = await createTestAccount(instances[0]!.app, "owner@erasure-instances.example");
  });

  afterAll(() => stop());

  it("a page another instance remembers is not served once the contact is erased", async () => {
    const [a, b] = instances as [(typeof instances)[0], (typeof instances)[0]];
    const t = await issueTokens(a.url, acc, "erased-elsewhere");
    const conv = (await send(a.url, t.access_token, "one")).conversation_id;
    await send(a.url, t.access_token, "two", conv);
    const auth = { authorization: `Bearer ${await idToken(b.url, acc)}` };
    // The first page has more after it: B serves it from its cache without asking the store once remembered.
    const read = () => getJson(b.url, "/get_messages_for_conversation", { conversation_id: conv, limit: 1 }, auth);
    for (let i = 0; i < 3; i++) expect((await read()).status).toBe(200);
    const r = await postJson(a.url, "/v1/account/contacts/erase", { user_id: "erased-elsewhere" }, auth);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    await eventually("instance B forgets the erased conversation", async () => (await read()).status === 404);
  });

  it("runs a scheduled job on one instance at a time", async () => {
    const [a, b] = instances as [(typeof instances)[0], (typeof instances)[0]];
    let release!: () => void;
    const held = new Promise<void>((r) => {
      release = r;
    });
    let entered!: () => void;
    const inside = new Promise<void>((r) => {
      entered = r;
    });
    const first = a.app.store.exclusive("retention", async () => {
      entered();
      await held;
      return "ran on A";
    });
    await inside;
    let ranOnB = false;
    expect(await b.app.store.exclusive("retention", async () => (ranOnB = true))).toBeUndefined();
    expect(ranOnB).toBe(false);
    release();
    expect(await first).toBe("ran on A");
    // Released: the other instance runs it now.
    expect(await b.app.store.exclusive("retention", async () => "ran on B")).toBe("ran on B");
  });
});
