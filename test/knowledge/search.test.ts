import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { serverForFile } from "../helpers/file-server.js";
import { idToken } from "../helpers/flows.js";
import { getJson, requestJson } from "../helpers/http.js";
import { startServer } from "../helpers/server.js";
import { waitFor } from "../helpers/time-scale.js";
import { startSite, type TestSite } from "./site-server.js";
import { addSource, settled } from "./support.js";

// SearchKnowledge (what the agent finds for a question, with provenance and whether it would answer) and the
// per-source re-sync schedule, over the JSON routes of a real server (SQLite here, PostgreSQL in api-postgres). The
// schedule is driven by the server's test clock, never by waiting.

const fx = serverForFile({ idTokens: true });
let site: TestSite;
const HOUR = 3_600_000;

beforeAll(async () => {
  site = await startSite();
});
afterAll(async () => {
  await site?.close();
});

interface Passage {
  source_id?: string;
  source_title?: string;
  title?: string;
  url?: string;
  heading_path?: string;
  excerpt?: string;
  score?: number;
  knowledge_version?: number;
}

async function search(chatbotId: string, query: Record<string, string>, token = fx.idA) {
  return getJson<{ data: { passages?: Passage[]; answers?: boolean; threshold?: number } }>(
    fx.s.url,
    `/v1/account/chatbots/${chatbotId}/knowledge/search`,
    query,
    { authorization: `Bearer ${token}` },
  );
}

/** How many times the site served the path. */
const served = (path: string) => site.requested.filter((p) => p === path).length;

describe("SearchKnowledge", () => {
  it("answers the ranked passages with their provenance, and whether the agent would answer", async () => {
    const r = await addSource(fx.s.url, fx.idA, fx.a.chatbotId, { kind: "page", url: `${site.url}/delivery` });
    const sourceId = r.body.data.source_id;
    await settled(fx.s.url, fx.idA, fx.a.chatbotId, sourceId);

    const found = await search(fx.a.chatbotId, { query: "How much are the freight costs per bicycle?", limit: "2" });
    expect(found.status, JSON.stringify(found.body)).toBe(200);
    expect(found.body.data.answers).toBe(true);
    expect(found.body.data.threshold).toBe(0.5);
    const [best, ...rest] = found.body.data.passages!;
    expect(best).toMatchObject({
      source_id: sourceId,
      source_title: "Delivery",
      title: "Delivery",
      url: `${site.url}/delivery#freight-costs`,
      heading_path: "Freight costs",
      knowledge_version: 1,
    });
    expect(best!.excerpt).toContain("49 EUR");
    expect(best!.score).toBeGreaterThanOrEqual(0.5);
    expect(rest.length).toBeLessThanOrEqual(1);

    // A question the knowledge does not answer: the agent would say it does not know.
    const unknown = await search(fx.a.chatbotId, { query: "Do you sell skateboards?" });
    expect(unknown.status).toBe(200);
    expect(unknown.body.data.answers ?? false).toBe(false);
    for (const p of unknown.body.data.passages ?? []) expect(p.score ?? 0).toBeLessThan(0.5);
  });

  it("refuses bad input with a 400 naming the field; another account's chatbot is not_found", async () => {
    const cases: [Record<string, string>, string][] = [
      [{}, "query"],
      [{ query: "   " }, "query"],
      [{ query: "x".repeat(501) }, "query"],
      [{ query: "freight", limit: "0" }, "limit"],
      [{ query: "freight", limit: "21" }, "limit"],
      [{ query: "freight", limit: "many" }, "limit"],
    ];
    for (const [q, field] of cases) {
      const r = await search(fx.a.chatbotId, q);
      expect(r.status, `${JSON.stringify(q).slice(0, 80)} → ${JSON.stringify(r.body)}`).toBe(400);
      expect(JSON.stringify(r.body)).toContain(field);
    }
    const bad = await search("not-a-uuid", { query: "freight" });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toContain("chatbot_id");
    const other = await fx.s.account();
    const r = await search(other.chatbotId, { query: "freight costs" });
    expect(r.status).toBe(404);
    expect(JSON.stringify(r.body)).not.toContain("49 EUR");
  });
});

describe("a source's re-sync schedule", () => {
  it("refuses a schedule out of bounds, or on a kind that is not fetched, naming resync_interval_hours", async () => {
    for (const body of [
      { kind: "page", url: `${site.url}/delivery`, resync_interval_hours: 721 },
      { kind: "page", url: `${site.url}/delivery`, resync_interval_hours: -1 },
      { kind: "site", url: `${site.url}/`, resync_interval_hours: "daily" },
      {
        kind: "snippets",
        snippets: [{ title: "t", url: "https://x.example/", snippet: "s" }],
        resync_interval_hours: 1,
      },
    ]) {
      const r = await addSource(fx.s.url, fx.idA, fx.a.chatbotId, body);
      expect(r.status, `${JSON.stringify(body)} → ${JSON.stringify(r.body)}`).toBe(400);
      expect(JSON.stringify(r.body)).toContain("resync_interval_hours");
    }
  });

  it("changes a source's schedule (PATCH), refusing one for a file", async () => {
    const page = await addSource(fx.s.url, fx.idA, fx.a.chatbotId, { kind: "page", url: `${site.url}/repairs` });
    const snippets = await addSource(fx.s.url, fx.idA, fx.a.chatbotId, {
      kind: "snippets",
      snippets: [{ title: "t", url: "https://x.example/", snippet: "s" }],
    });
    const patch = (id: string, body: unknown) =>
      requestJson(fx.s.url, "PATCH", `/v1/account/chatbots/${fx.a.chatbotId}/knowledge_sources/${id}`, fx.authA, body);
    const set = await patch(page.body.data.source_id, { resync_interval_hours: 168 });
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    expect(set.body.data).toMatchObject({ resync_interval_hours: 168 });
    const read = await getJson(
      fx.s.url,
      `/v1/account/chatbots/${fx.a.chatbotId}/knowledge_sources/${page.body.data.source_id}`,
      {},
      fx.authA,
    );
    expect(read.body.data.resync_interval_hours).toBe(168);
    for (const [id, body] of [
      [snippets.body.data.source_id, { resync_interval_hours: 1 }],
      [page.body.data.source_id, { resync_interval_hours: 721 }],
      [page.body.data.source_id, { resync_interval_hours: "weekly" }],
    ] as const) {
      const r = await patch(id, body);
      expect(r.status, JSON.stringify(r.body)).toBe(400);
      expect(JSON.stringify(r.body)).toContain("resync_interval_hours");
    }
  });

  it("re-syncs a page when its interval has passed, indexing it again only when it changed", {
    timeout: 120_000,
  }, async () => {
    const b = await fx.s.account();
    // The clock moves hours on: each step signs in again (an ID token lasts less).
    const tok = () => idToken(fx.s.url, b);
    const token = await tok();
    const r = await addSource(fx.s.url, token, b.chatbotId, {
      kind: "page",
      url: `${site.url}/returns`,
      resync_interval_hours: 2,
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.data).toMatchObject({ resync_interval_hours: 2 });
    const id = r.body.data.source_id;
    expect(await settled(fx.s.url, token, b.chatbotId, id)).toMatchObject({ status: "indexed", version: 1 });
    const knowledge = fx.s.app.knowledge;
    const fetched = served("/returns");

    // Not due yet: nothing is fetched.
    fx.s.clock.advance(HOUR);
    await knowledge.resyncDue();
    await knowledge.idle();
    expect(served("/returns")).toBe(fetched);

    // Due: fetched again; the page did not change, so the version stays.
    fx.s.clock.advance(HOUR);
    expect(await knowledge.resyncDue()).toBeGreaterThanOrEqual(1);
    expect(await settled(fx.s.url, await tok(), b.chatbotId, id)).toMatchObject({ status: "indexed", version: 1 });
    expect(served("/returns")).toBe(fetched + 1);

    // Changed: the next scheduled re-sync indexes it, and the search finds the new text.
    const before = site.pages.get("/returns")!;
    site.pages.set("/returns", before.replace("fourteen days", "thirty days"));
    try {
      fx.s.clock.advance(2 * HOUR);
      await knowledge.resyncDue();
      const later = await tok();
      expect(await settled(fx.s.url, later, b.chatbotId, id)).toMatchObject({ status: "indexed", version: 2 });
      const found = await search(b.chatbotId, { query: "Within how many days can I send back a bicycle?" }, later);
      expect(found.body.data.passages![0]!.excerpt).toContain("thirty days");
      expect(found.body.data.passages![0]!.knowledge_version).toBe(2);
    } finally {
      site.pages.set("/returns", before);
    }
  });

  it("survives a restart: a source due while the service was down is re-synced when it starts", {
    timeout: 120_000,
  }, async () => {
    const first = await startServer();
    const c = await first.account();
    const token = await idToken(first.url, c);
    const r = await addSource(first.url, token, c.chatbotId, {
      kind: "page",
      url: `${site.url}/repairs`,
      resync_interval_hours: 24,
    });
    const id = r.body.data.source_id;
    await settled(first.url, token, c.chatbotId, id);
    const fetched = served("/repairs");
    await first.close();

    first.clock.advance(25 * HOUR);
    const second = await startServer({ dir: first.dir, overrides: { clock: first.clock } });
    try {
      // The schedule is read from the store on start: no call, no waiting for the periodic look.
      await waitFor("the due page fetched again", () => served("/repairs") > fetched, { ms: 60_000 });
      expect(served("/repairs")).toBe(fetched + 1);
      expect(await settled(second.url, await idToken(second.url, c), c.chatbotId, id)).toMatchObject({
        status: "indexed",
        version: 1,
      });
    } finally {
      await second.close(true);
    }
  });
});
