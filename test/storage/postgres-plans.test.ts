import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ContactFilter } from "../../src/domain/conversation/repository.js";
import { foldForSearch } from "../../src/domain/conversation/search-fold.js";
import { newId } from "../../src/domain/ids.js";
import { openPgStore, type PgStore } from "../../src/storage/postgres/index.js";
import { createTestDatabase, postgresSkipReason, type TestDatabase } from "../helpers/postgres.js";
import { account, message } from "./contract/fixtures.js";
import { GROWING } from "./plans.js";

// Plans, not timings: every statement the PostgreSQL repositories run is explained over a populated, analyzed
// database, and none may read a whole growing table, nor sort a list an index gives in order.
const CONTACTS = 60_000;
/** Accounts sharing the tables: the one under test holds one in ACCOUNTS of the rows, as in a real deployment. */
const ACCOUNTS = 20;

const skip = await postgresSkipReason();
if (skip) console.warn(`PostgreSQL query plans skipped: ${skip}`);

interface Recorded {
  name: string;
  text: string;
  values: unknown[];
}

/** Every plan node, depth first. */
function nodes(plan: Record<string, unknown>): Record<string, unknown>[] {
  return [plan, ...((plan.Plans as Record<string, unknown>[] | undefined) ?? []).flatMap(nodes)];
}

describe.skipIf(skip !== undefined)("PostgreSQL query plans", () => {
  let database: TestDatabase;
  let store: PgStore;
  const recorded = new Map<string, Recorded>();
  let a: { accountId: string; chatbotId: string };
  let conversationId: string;

  beforeAll(async () => {
    database = await createTestDatabase();
    store = await openPgStore(database.url);
    a = await account(store);
    // Bulk rows straight in SQL: many accounts, keys and tokens; contacts spread over the accounts, each with a
    // conversation and two messages.
    const acct = "CASE WHEN i % $3 = 0 THEN $1 ELSE 'acct-' || (i % $3) END";
    await store.pool.query(
      `INSERT INTO accounts (account_id, email, created_at) SELECT 'acct-' || i, 'owner' || i || '@bulk.example', i
       FROM generate_series(1, 5000) i`,
    );
    await store.pool.query(
      `INSERT INTO chatbots (chatbot_id, account_id, name, created_at) SELECT 'bot-' || i, 'acct-' || i, 'b', i
       FROM generate_series(1, 5000) i`,
    );
    await store.pool.query(
      `INSERT INTO api_keys (api_key_id, account_id, key_hash, hint, created_at) SELECT 'key-' || i, 'acct-' || (1 + i % 5000), md5(i::text), 'cak_x', i
       FROM generate_series(1, 20000) i`,
    );
    await store.pool.query(
      `INSERT INTO refresh_tokens (token_hash, session_id, account_id, chatbot_id, user_id, created_at, expires_at)
       SELECT md5('rt' || i), md5('s' || i), 'acct-' || (1 + i % 5000), 'bot-' || (1 + i % 5000), 'user-' || i, i,
         i + 1000
       FROM generate_series(1, 20000) i`,
    );
    await store.pool.query(
      `INSERT INTO refresh_token_rotations (token_hash, session_id, rotated_at, successor_salt)
       SELECT md5('old' || i), md5('s' || i), i, 'salt' FROM generate_series(1, 20000) i`,
    );
    await store.pool.query(
      `INSERT INTO launch_codes (code_hash, account_id, chatbot_id, user_id, session_id, origin, created_at, expires_at)
       SELECT md5('lc' || i), 'acct-' || (1 + i % 5000), 'bot-' || (1 + i % 5000), 'user-' || i, md5('s' || i),
         'https://shop.example', i, i + 60000
       FROM generate_series(1, 20000) i`,
    );
    await store.pool.query(
      `INSERT INTO token_revocations (chatbot_id, user_id, not_before) SELECT 'bot-' || (1 + i % 5000), 'user-' || i, i
       FROM generate_series(1, 20000) i`,
    );
    await store.pool.query(
      `INSERT INTO contacts (contact_id, account_id, user_id, contact_name, email, created_at, latest_message_at,
         latest_conversation_id, latest_status, latest_assigned_to, latest_activity_at, unread_count, live_activity_at,
         channels, search_text)
       SELECT 'c' || i, ${acct}, 'user-' || i, 'name ' || md5(i::text), md5(i::text) || '@shop.example', i, 1000 + i,
         'v' || i, CASE WHEN i % 3 = 0 THEN 'live' ELSE 'closed' END, 'ai_agent', 1000 + i, i % 5,
         CASE WHEN i % 3 = 0 THEN 1000 + i END, 'web',
         'user-' || i || chr(31) || 'name ' || md5(i::text) || chr(31) || md5(i::text) || '@shop.example'
       FROM generate_series(1, $2) i`,
      [a.accountId, CONTACTS, ACCOUNTS],
    );
    await store.pool.query(
      `INSERT INTO conversations (conversation_id, account_id, chatbot_id, contact_id, channel, status, assigned_to, created_at, last_message_at, message_count)
       SELECT 'v' || i, ${acct}, CASE WHEN i % $3 = 0 THEN $4 ELSE 'bot-' || (i % $3) END, 'c' || i, 'web',
         CASE WHEN i % 3 = 0 THEN 'live' ELSE 'closed' END, 'ai_agent', i, 1000 + i, 2
       FROM generate_series(1, $2) i`,
      [a.accountId, CONTACTS, ACCOUNTS, a.chatbotId],
    );
    await store.pool.query(
      `INSERT INTO messages (message_id, conversation_id, message_order, role, content, created_at)
       SELECT 'm' || i || '-' || o, 'v' || i, o, 'user', 'hello', i FROM generate_series(1, $1) i, generate_series(1, 2) o`,
      [CONTACTS],
    );
    conversationId = newId();
    await message(store, a, conversationId, { at: 50_000, start: true, userId: "live-user" });
    await store.pool.query("ANALYZE");

    // Record every named statement from here on.
    const original = pg.Pool.prototype.query;
    const originalClient = pg.Client.prototype.query;
    const record = (config: unknown): void => {
      const c = config as (Partial<Recorded> & { statements?: unknown }) | undefined;
      // A unit's pipelined statements (storage/postgres/pipeline.ts) go to the client as one query: each is recorded.
      if (c && typeof c === "object" && Array.isArray(c.statements)) for (const s of c.statements) record(s);
      else if (c && typeof c === "object" && c.name && c.text)
        recorded.set(c.name, { name: c.name, text: c.text, values: c.values ?? [] });
    };
    pg.Pool.prototype.query = function (this: pg.Pool, ...args: unknown[]) {
      record(args[0]);
      return (original as (...a: unknown[]) => unknown).apply(this, args);
    } as typeof original;
    pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
      record(args[0]);
      return (originalClient as (...a: unknown[]) => unknown).apply(this, args);
    } as typeof originalClient;
    try {
      for (const filter of ["all", "unread", "live"] as ContactFilter[])
        for (const search of ["", foldForSearch("98f13708210194c4")])
          await store.contacts.list({
            accountId: a.accountId,
            search,
            filter,
            assignee: null,
            limit: 10,
            offset: 0,
            liveSince: 1500,
          });
      await store.contacts.belongsTo(a.accountId, "c20");
      await store.contacts.upsert(a.accountId, "user-20", { contactName: "Renamed", email: "", phoneNumber: "" }, 1);
      const ref = { conversationId: "v40", createdAt: 40 };
      await store.conversations.byId("v40");
      await store.conversations.messages(ref, 20, 0);
      await store.conversations.recent(ref, 20);
      await store.conversations.forUser(a.accountId, a.chatbotId, "user-40", 50);
      await store.conversations.forContact("c40", 10, 0);
      await message(store, a, conversationId, { at: 50_001, role: "assistant" });
      await store.conversations.markRead(conversationId);
      await store.conversations.assign(conversationId, "ann@shop.example", "Ann");
      await store.conversations.setStatus(conversationId, "closed", 50_002);
      await store.accounts.byEmail("nobody@example.com");
      await store.accounts.page("", 10);
      await store.apiKeys.byHash("x");
      await store.apiKeys.listForAccount(a.accountId);
      await store.refreshTokens.byHash("x");
      await store.refreshTokens.notBefore(a.chatbotId, "user-1");
      await store.refreshTokens.revoke({ accountId: a.accountId, userId: "user-1" }, 1);
      await store.refreshTokens.notBefore(a.chatbotId, "user-1", "s-1");
      await store.refreshTokens.bySession("s-1");
      await store.refreshTokens.list({ accountId: a.accountId, userId: "user-1" }, 21, 0);
      await store.refreshTokens.revokeSession(a.accountId, "s-1", 2);
      await store.refreshTokens.touch("s-1", 3, "https://shop.example", "UA");
      await store.refreshTokens.rotate("s-1", "x", "y", "salt", 4);
      await store.refreshTokens.rotated("x");
      await store.refreshTokens.policy(a.chatbotId);
      await store.launchCodes.byHash("x");
      await store.launchCodes.markUsed("x", 5);
      await store.reports.counts(a.chatbotId, 0, 100_000, 0);
    } finally {
      pg.Pool.prototype.query = original;
      pg.Client.prototype.query = originalClient;
    }
  });

  afterAll(async () => {
    await store?.close();
    await database?.drop();
  });

  const explain = async (r: Recorded) => {
    const res = await store.pool.query({ text: `EXPLAIN (FORMAT JSON) ${r.text}`, values: r.values });
    return nodes((res.rows[0]["QUERY PLAN"] as { Plan: Record<string, unknown> }[])[0]!.Plan);
  };

  it("recorded the statements it explains", () => {
    expect([...recorded.keys()]).toEqual(
      expect.arrayContaining([
        "contact_list_all_plain",
        "contact_list_live_search",
        "msg_page",
        "conv_append",
        "conv_for_contact",
        "report_starts",
        "report_ratings",
        "report_first_responses",
        "report_times_to_close",
        "report_quarters",
      ]),
    );
  });

  it("no statement reads a whole growing table", async () => {
    const scans: string[] = [];
    for (const r of recorded.values()) {
      if (!/^\s*(SELECT|UPDATE|DELETE|WITH)/i.test(r.text)) continue;
      for (const n of await explain(r))
        if (n["Node Type"] === "Seq Scan" && GROWING.includes(n["Relation Name"] as string))
          scans.push(`${r.name}: Seq Scan on ${n["Relation Name"]}`);
    }
    expect(scans).toEqual([]);
  });

  it("a list page without a search comes in index order (keyset-friendly: no sort)", async () => {
    for (const f of ["all", "unread", "live"]) {
      const plan = await explain(recorded.get(`contact_list_${f}_plain`)!);
      expect(
        plan.map((n) => n["Node Type"]),
        f,
      ).not.toContain("Sort");
      expect(
        plan.some((n) => n["Node Type"] === "Index Scan" && n["Relation Name"] === "contacts"),
        f,
      ).toBe(true);
    }
    const messages = await explain(recorded.get("msg_page")!);
    expect(messages.map((n) => n["Node Type"])).not.toContain("Sort");
    const sessions = await explain(recorded.get("rt_list")!);
    expect(sessions.map((n) => n["Node Type"])).not.toContain("Sort");
  });

  it("a list variant reads conversations only by key: the latest one's state is on the contact row", async () => {
    const lists = [...recorded.values()].filter((r) => r.name.startsWith("contact_list_"));
    expect(lists).toHaveLength(6);
    for (const r of lists) {
      const reads = (await explain(r)).filter((n) => n["Relation Name"] === "conversations");
      // `all` reads no conversation; the others test the latest one's snooze by its key (one lookup per listed row).
      if (r.name.startsWith("contact_list_all_")) expect(reads, r.name).toEqual([]);
      for (const n of reads) expect(n["Node Type"], r.name).toMatch(/^Index (Only )?Scan$/);
    }
  });

  it("a rare search term is answered by the trigram index over the stored folded text", async () => {
    const plan = await explain(recorded.get("contact_list_all_search")!);
    expect(plan.some((n) => n["Index Name"] === "contacts_search")).toBe(true);
  });
});
