import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newId } from "../../src/domain/ids.js";
import { makeDocx, makePdf, makeZip } from "../helpers/documents.js";
import { serverForFile } from "../helpers/file-server.js";
import { idToken } from "../helpers/flows.js";
import { getJson } from "../helpers/http.js";
import { sourceRecord } from "../helpers/knowledge-source.js";
import { startServer, type TestServer } from "../helpers/server.js";
import { scaled } from "../helpers/time-scale.js";
import { startSite, type TestSite } from "../knowledge/site-server.js";
import { addSource, b64, settled } from "../knowledge/support.js";

// Hostile knowledge sources: bombs end as a failed source with a reason (never a crash or a hang), bad input is a
// 400 naming its field and adds nothing, private addresses are refused in production, and a source left indexing
// by a stopped process is indexed on the next start.

const fx = serverForFile({ idTokens: true });

async function failedWith(body: Record<string, unknown>, reason: RegExp) {
  const r = await addSource(fx.s.url, fx.idA, fx.a.chatbotId, body);
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  const done = await settled(fx.s.url, fx.idA, fx.a.chatbotId, r.body.data.source_id);
  expect(done.status).toBe("failed");
  expect(done.status_reason).toMatch(reason);
  expect(done.chunk_count ?? 0).toBe(0);
}

describe("hostile knowledge sources", () => {
  // Each reads in the extraction worker; on a loaded machine that takes a while.
  const LONG = 120_000;
  it(
    "a ZIP bomb as DOCX fails with a reason",
    async () => {
      // 200 MB of spaces in a document.xml of a few hundred kB.
      const bomb = makeDocx([], { documentXml: Buffer.alloc(200 * 1024 * 1024, 0x20) });
      expect(bomb.length).toBeLessThan(1024 * 1024);
      await failedWith({ kind: "file", file_name: "bomb.docx", content: b64(bomb) }, /unpacks to 200 MB.*ZIP bomb/);
    },
    LONG,
  );

  it(
    "a PDF of 1,200 pages fails with a reason",
    async () => {
      // PDF.js checks a claimed page count against the page tree: these pages are real.
      const pdf = makePdf(Array.from({ length: 1200 }, (_, i) => [`Page ${i + 1}`]));
      await failedWith({ kind: "file", file_name: "huge.pdf", content: b64(pdf) }, /1200 pages; at most 1000/);
    },
    LONG,
  );

  it(
    "deeply nested HTML fails with a reason",
    async () => {
      const nested = `<html><body>${"<div>".repeat(50_000)}deep${"</div>".repeat(50_000)}</body></html>`;
      await failedWith({ kind: "file", file_name: "nested.html", content: b64(nested) }, /nested more than 400/);
    },
    LONG,
  );

  it(
    "files of the wrong type fail with a reason, and the process stays up",
    async () => {
      await failedWith(
        { kind: "file", file_name: "archive.zip", content: b64(makeZip([{ name: "a.txt", data: Buffer.from("x") }])) },
        /ZIP archive but not a Word document/,
      );
      await failedWith({ kind: "file", file_name: "fake.pdf", content: b64("not a pdf") }, /does not start like one/);
      await failedWith(
        { kind: "file", file_name: "latin1.txt", content: b64(Buffer.from([0xe9, 0xff, 0xfe])) },
        /UTF-8/,
      );
      await failedWith(
        { kind: "file", file_name: "image.png", content: b64("\x89PNG....") },
        /not read; upload Markdown/,
      );
      expect((await getJson(fx.s.url, "/healthz")).status).toBe(200);
    },
    LONG,
  );

  it("refuses bad input with a 400 naming the field, adding nothing", async () => {
    const before =
      (
        await getJson(
          fx.s.url,
          `/v1/account/chatbots/${fx.a.chatbotId}/knowledge_sources`,
          {},
          { authorization: `Bearer ${fx.idA}` },
        )
      ).body.data.sources?.length ?? 0;
    const cases: [Record<string, unknown>, string][] = [
      [{ kind: "zip" }, "kind"],
      [{}, "kind"],
      [{ kind: "file", content: b64("hello") }, "file_name"],
      [{ kind: "file", file_name: "a.txt" }, "content"],
      [{ kind: "file", file_name: "a.txt", content: b64(Buffer.alloc(8 * 1024 * 1024 + 1, 0x61)) }, "content"],
      [{ kind: "page", content: b64("x") }, "content"],
      [{ kind: "page" }, "url"],
      [{ kind: "page", url: "javascript:alert(1)" }, "url"],
      [{ kind: "page", url: "file:///etc/passwd" }, "url"],
      [{ kind: "page", url: "http://user:pw@help.example/" }, "url"],
      [{ kind: "file", file_name: "a.txt", content: b64("x"), url: "https://help.example/" }, "url"],
      [{ kind: "site", url: "https://help.example/", max_pages: 100_000 }, "max_pages"],
      [{ kind: "site", url: "https://help.example/", max_depth: 9 }, "max_depth"],
      [{ kind: "page", url: "https://help.example/", max_pages: 3 }, "max_pages"],
      [{ kind: "snippets" }, "snippets"],
      [{ kind: "snippets", snippets: [{ title: "t", url: "javascript:x", snippet: "s" }] }, "snippets[0].url"],
      [
        {
          kind: "page",
          url: "https://help.example/",
          snippets: [{ title: "t", url: "https://x.example", snippet: "s" }],
        },
        "snippets",
      ],
      [{ kind: "file", file_name: "a.txt", content: "%%%not base64" }, "content"],
      [{ kind: "site", url: "https://help.example/", max_pages: "ten" }, "max_pages"],
    ];
    for (const [body, field] of cases) {
      const r = await addSource(fx.s.url, fx.idA, fx.a.chatbotId, body);
      expect(r.status, `${JSON.stringify(body).slice(0, 120)} → ${JSON.stringify(r.body)}`).toBe(400);
      expect(JSON.stringify(r.body), JSON.stringify(body).slice(0, 120)).toContain(field);
    }
    const after =
      (
        await getJson(
          fx.s.url,
          `/v1/account/chatbots/${fx.a.chatbotId}/knowledge_sources`,
          {},
          { authorization: `Bearer ${fx.idA}` },
        )
      ).body.data.sources?.length ?? 0;
    expect(after).toBe(before);
  });

  it("refuses a body over the upload limit as too large", async () => {
    const r = await addSource(fx.s.url, fx.idA, fx.a.chatbotId, {
      kind: "file",
      file_name: "big.txt",
      content: "A".repeat(12 * 1024 * 1024),
    });
    expect([413, 429, 400]).toContain(r.status);
    expect(r.status).not.toBe(200);
  });

  it("the search takes hostile questions: full-text syntax and SQL are words, bad values a 400, never a 5xx", async () => {
    const search = (query: Record<string, string>) =>
      getJson(fx.s.url, `/v1/account/chatbots/${fx.a.chatbotId}/knowledge/search`, query, fx.authA);
    for (const q of [
      '") OR 1=1 --',
      "NEAR(chain oil, 3) OR * AND NOT x",
      'chain* ^oil {title}: "quoted',
      "'; DROP TABLE knowledge_chunks; --",
      "ÿ\u202e right-to-left",
      "a".repeat(500),
    ]) {
      const r = await search({ query: q });
      expect(r.status, `${q.slice(0, 60)} → ${JSON.stringify(r.body)}`).toBe(200);
      expect(Array.isArray(r.body.data.passages ?? [])).toBe(true);
    }
    for (const [query, field] of [
      [{ query: "oil\u0000" }, "query"],
      [{ query: "oil", limit: "1e9" }, "limit"],
      [{ query: "oil", limit: "-1" }, "limit"],
    ] as const) {
      const r = await search(query);
      expect(r.status, `${JSON.stringify(query)} → ${JSON.stringify(r.body)}`).toBe(400);
      expect(JSON.stringify(r.body)).toContain(field);
    }
    expect((await getJson(fx.s.url, "/healthz")).status).toBe(200);
  });

  it("another chatbot id, or none, is not_found", async () => {
    const r = await addSource(fx.s.url, fx.idA, newId(), {
      kind: "snippets",
      snippets: [{ title: "t", url: "https://x.example/", snippet: "s" }],
    });
    expect(r.status).toBe(404);
  });
});

describe("in production, knowledge is fetched from public addresses only", () => {
  let prod: TestServer;
  let site: TestSite;
  beforeAll(async () => {
    prod = await startServer({
      env: { NODE_ENV: "production", AIAGENT_SECRETS: "a-test-secret-for-production-mode-0123456789" },
    });
    site = await startSite();
  });
  afterAll(async () => {
    await site?.close();
    await prod?.close(true);
  });

  it("refuses loopback, private and link-local page and site addresses with a 400 naming url", async () => {
    const b = await prod.account();
    const t = await idToken(prod.url, b);
    for (const url of [
      `${site.url}/delivery`,
      "http://localhost/",
      "http://10.0.0.1/",
      "http://169.254.169.254/latest/meta-data/",
      "http://[::1]/",
      "http://[::ffff:127.0.0.1]/",
      "http://0.0.0.0/",
    ])
      for (const kind of ["page", "site"]) {
        const r = await addSource(prod.url, t, b.chatbotId, { kind, url });
        expect(r.status, `${kind} ${url}: ${JSON.stringify(r.body)}`).toBe(400);
        expect(JSON.stringify(r.body)).toContain("url");
      }
    expect(site.requested).toEqual([]);
  });
});

describe("a source left indexing by a stopped process", () => {
  it("is indexed on the next start", { timeout: scaled(120_000) }, async () => {
    const first = await startServer();
    const b = await first.account();
    const sourceId = newId();
    // As a process that stopped mid-indexing leaves it: status indexing, its file kept.
    await first.app.store.knowledge.addSource(
      sourceRecord(b, {
        sourceId,
        title: "handbook.md",
        fileName: "handbook.md",
        status: "indexing",
        createdAt: 1,
        updatedAt: 1,
      }),
      new TextEncoder().encode("# Handbook\n\nThe workshop opens at eight."),
    );
    await first.close();
    const second = await startServer({ dir: first.dir });
    try {
      const t = await idToken(second.url, b);
      const done = await settled(second.url, t, b.chatbotId, sourceId);
      expect(done).toMatchObject({ status: "indexed", version: 1, title: "Handbook" });
    } finally {
      await second.close(true);
    }
  });
});
