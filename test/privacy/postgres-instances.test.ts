import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type App, buildApp } from "../../src/app.js";
import { loadConfig } from "../../src/config.js";
import { createLogger } from "../../src/log.js";
import type { RunningServer } from "../../src/protocol/http/server.js";
import { idToken, issueTokens, send } from "../helpers/flows.js";
import { getJson, postJson } from "../helpers/http.js";
import { createTestDatabase, postgresSkipReason, type TestDatabase } from "../helpers/postgres.js";
import { createTestAccount, type TestAccount } from "../helpers/server.js";
import { eventually } from "../helpers/webhook-receiver.js";

// Erasure and retention with two instances of the service on one PostgreSQL database.
const skip = await postgresSkipReason();
if (skip) console.warn(`erasure across instances skipped: ${skip}`);

describe.skipIf(skip !== undefined)("erasure and retention across instances", () => {
  let database: TestDatabase;
  const dir = mkdtempSync(join(tmpdir(), "aiagent-erasure-"));
  const instances: { app: App; server: RunningServer; url: string }[] = [];
  let acc: TestAccount;

  beforeAll(async () => {
    database = await createTestDatabase();
    for (let i = 0; i < 2; i++) {
      const config = loadConfig({
        AIAGENT_DATABASE_URL: database.url,
        AIAGENT_DB: join(dir, "unused.db"),
        AIAGENT_PORT: "0",
        AIAGENT_SECRETS: "a-test-secret-for-two-instances-0123456789",
        AIAGENT_LOG_LEVEL: "silent",
      });
      const app = await buildApp(config, createLogger("silent"));
      const server = await app.listen();
      instances.push({ app, server, url: server.url });
    }
    acc = await createTestAccount(instances[0]!.app, "owner@erasure-instances.example");
  });

  afterAll(async () => {
    for (const i of instances) {
      await i.server.close(1000);
      await i.app.close();
    }
    await database?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

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
