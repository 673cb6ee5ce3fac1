import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeDocx, makePdf } from "../helpers/documents.js";
import { serverForFile } from "../helpers/file-server.js";
import { idToken, issueTokens, send } from "../helpers/flows.js";
import { getJson, requestJson } from "../helpers/http.js";
import type { TestAccount } from "../helpers/server.js";
import { scaled } from "../helpers/time-scale.js";
import { startSite, type TestSite } from "./site-server.js";
import { addSource, b64, settled } from "./support.js";

// Knowledge sources end to end, over the JSON routes of a real server (SQLite here, PostgreSQL in api-postgres):
// a file of each kind, a page and a small site from loopback, resync, delete, and the built-in agent's cited answers.

const fx = serverForFile({ idTokens: true });
let site: TestSite;

beforeAll(async () => {
  site = await startSite();
});
afterAll(async () => {
  await site?.close();
});

/** Asks the chatbot in the frame as a new customer; answers the stored reply. */
async function ask(question: string, account: TestAccount = fx.a) {
  const t = await issueTokens(fx.s.url, account, `customer-${Math.random().toString(36).slice(2)}`);
  return (await send(fx.s.url, t.access_token, question)).reply as {
    content: string;
    documents?: Record<string, unknown>[];
  };
}

const auth = () => ({ authorization: `Bearer ${fx.idA}` });

describe("knowledge sources", () => {
  // Each file is read in the extraction worker and indexed in the background: slow on a loaded machine.
  it("indexes a file of each kind (Markdown, text, HTML, PDF, DOCX) and answers from it with provenance", {
    timeout: scaled(180_000),
  }, async () => {
    const files = [
      {
        file_name: "care.md",
        content: "# Bike care\n\n## Chain oil {#chain}\n\nOil the chain every 300 kilometres with a dry lubricant.\n",
        media: "text/markdown",
        question: "How often should I oil my chain?",
      },
      {
        file_name: "tyres.txt",
        content: "Tyre pressure\n\nInflate road tyres to six bar and gravel tyres to three bar.",
        media: "text/plain",
        question: "What tyre pressure for gravel tyres?",
      },
      {
        file_name: "brakes.html",
        content:
          "<html><head><title>Brakes</title></head><body><h1 id='pads'>Brake pads</h1><p>Replace brake pads when the groove is worn flat, usually after 2000 kilometres.</p></body></html>",
        media: "text/html",
        question: "When do brake pads need replacing?",
      },
      {
        file_name: "warranty.pdf",
        content: makePdf(
          [
            ["Warranty", "Frames carry a lifetime warranty for the first owner."],
            ["Paint", "Paint chips are not covered."],
          ],
          { title: "Warranty terms" },
        ),
        media: "application/pdf",
        question: "Is the frame warranty lifetime?",
      },
      {
        file_name: "saddle.docx",
        content: makeDocx([
          "# Saddle height",
          "Set the saddle so your knee is slightly bent at the lowest pedal position.",
        ]),
        media: "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        question: "How high should the saddle be set?",
      },
    ];
    for (const f of files) {
      const r = await addSource(fx.s.url, fx.idA, fx.a.chatbotId, {
        kind: "file",
        file_name: f.file_name,
        content: b64(f.content),
      });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(r.body.data.status).toBe("queued");
      const done = await settled(fx.s.url, fx.idA, fx.a.chatbotId, r.body.data.source_id);
      expect(done, f.file_name).toMatchObject({ status: "indexed", media_type: f.media, version: 1, page_count: 1 });
      expect(done.chunk_count).toBeGreaterThan(0);
      expect(done.content_hash).toMatch(/^[0-9a-f]{64}$/);
      const reply = await ask(f.question);
      expect(reply.documents?.[0], `${f.file_name}: ${reply.content}`).toMatchObject({
        source_id: r.body.data.source_id,
        knowledge_version: 1,
      });
      expect(reply.documents![0]!.score).toBeGreaterThanOrEqual(0.5);
      expect(String(reply.documents![0]!.excerpt).length).toBeGreaterThan(0);
    }
    // The PDF's title comes from the document; its passage names its page.
    const list = await getJson(fx.s.url, `/v1/account/chatbots/${fx.a.chatbotId}/knowledge_sources`, {}, auth());
    expect(list.body.data.sources.map((x: { title: string }) => x.title)).toContain("Warranty terms");
    const pdfReply = await ask("Is the frame warranty lifetime?");
    expect(pdfReply.documents![0]).toMatchObject({ heading_path: "Page 1", source_title: "Warranty terms" });
    expect(pdfReply.content).toContain("lifetime warranty");
  });

  it("indexes one page from its URL, citing the page with its heading's anchor", async () => {
    const r = await addSource(fx.s.url, fx.idA, fx.a.chatbotId, { kind: "page", url: `${site.url}/delivery` });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const done = await settled(fx.s.url, fx.idA, fx.a.chatbotId, r.body.data.source_id);
    expect(done).toMatchObject({ status: "indexed", title: "Delivery", page_count: 1 });
    const reply = await ask("How much are the freight costs per bicycle?");
    expect(reply.content).toContain("49 EUR");
    expect(reply.documents![0]).toMatchObject({
      url: `${site.url}/delivery#freight-costs`,
      anchor_url: `${site.url}/delivery#freight-costs`,
      source_id: r.body.data.source_id,
      source_title: "Delivery",
      // Readability takes the page's h1 as its title: the passage's headings start below it.
      heading_path: "Freight costs",
      title: "Delivery",
    });
    // The documented fields are still there, unchanged in meaning.
    expect(reply.documents![0]!.snippet).toContain("49 EUR");
  });

  it("crawls a small site on its origin: robots.txt honoured, a redirect followed, a 404 and a page too large skipped", {
    timeout: scaled(180_000),
  }, async () => {
    const b = await fx.s.account();
    const bToken = await idToken(fx.s.url, b);
    const r = await addSource(fx.s.url, bToken, b.chatbotId, { kind: "site", url: `${site.url}/`, max_depth: 2 });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const done = await settled(fx.s.url, bToken, b.chatbotId, r.body.data.source_id);
    // Home, delivery, returns (through the redirect) and repairs; not /private (robots.txt), /missing, /huge, elsewhere.
    expect(done).toMatchObject({ status: "indexed", page_count: 4, version: 1 });
    expect(site.requested).not.toContain("/private/staff");
    const returns = await ask("Can I send back an unridden bicycle?", b);
    expect(returns.documents![0]).toMatchObject({ url: `${site.url}/returns#returns` });
    const secret = await ask("What is the staff discount code?", b);
    expect(secret.documents ?? []).toEqual([]);
    expect(secret.content).toMatch(/don't know/);

    // Resync: only the page that changed is indexed again, and the version moves on.
    const written: string[] = [];
    const knowledge = fx.s.app.store.knowledge;
    const replacePage = knowledge.replacePage.bind(knowledge);
    knowledge.replacePage = (src, pageUrl, hash, chunks) => {
      written.push(pageUrl);
      return replacePage(src, pageUrl, hash, chunks);
    };
    try {
      site.pages.set(
        "/repairs",
        site.pages.get("/repairs")!.replace("punctures are fixed while you wait", "punctures are fixed within an hour"),
      );
      const again = await requestJson(
        fx.s.url,
        "POST",
        `/v1/account/chatbots/${b.chatbotId}/knowledge_sources/${r.body.data.source_id}/resync`,
        { authorization: `Bearer ${bToken}` },
        {},
      );
      expect(again.status, JSON.stringify(again.body)).toBe(200);
      const resynced = await settled(fx.s.url, bToken, b.chatbotId, r.body.data.source_id);
      expect(resynced).toMatchObject({ status: "indexed", version: 2, page_count: 4 });
      expect(written).toEqual([`${site.url}/repairs`]);
      expect((await ask("How fast are punctures fixed?", b)).content).toContain("within an hour");
      // Nothing changed: nothing is written, the version stays.
      written.length = 0;
      await requestJson(
        fx.s.url,
        "POST",
        `/v1/account/chatbots/${b.chatbotId}/knowledge_sources/${r.body.data.source_id}/resync`,
        { authorization: `Bearer ${bToken}` },
        {},
      );
      expect(await settled(fx.s.url, bToken, b.chatbotId, r.body.data.source_id)).toMatchObject({ version: 2 });
      expect(written).toEqual([]);
    } finally {
      knowledge.replacePage = replacePage;
    }
  });

  it("reads a sitemap's pages", async () => {
    const c = await fx.s.account();
    const cToken = await idToken(fx.s.url, c);
    const r = await addSource(fx.s.url, cToken, c.chatbotId, { kind: "site", url: `${site.url}/sitemap.xml` });
    const done = await settled(fx.s.url, cToken, c.chatbotId, r.body.data.source_id);
    expect(done).toMatchObject({ status: "indexed", page_count: 2 });
  });

  it("never cites a deleted source's passages again", async () => {
    const d = await fx.s.account();
    const dToken = await idToken(fx.s.url, d);
    const r = await addSource(fx.s.url, dToken, d.chatbotId, {
      kind: "file",
      file_name: "lights.md",
      content: b64("# Lights\n\nFront lights must be white and rear lights red by law."),
    });
    const other = await addSource(fx.s.url, dToken, d.chatbotId, {
      kind: "file",
      file_name: "bells.txt",
      content: b64("Every bicycle needs a bell."),
    });
    await settled(fx.s.url, dToken, d.chatbotId, r.body.data.source_id);
    await settled(fx.s.url, dToken, d.chatbotId, other.body.data.source_id);
    expect((await ask("What colour must rear lights be?", d)).documents![0]).toMatchObject({
      source_id: r.body.data.source_id,
    });
    const del = await requestJson(
      fx.s.url,
      "DELETE",
      `/v1/account/chatbots/${d.chatbotId}/knowledge_sources/${r.body.data.source_id}`,
      { authorization: `Bearer ${dToken}` },
    );
    expect(del.status).toBe(200);
    const after = await ask("What colour must rear lights be?", d);
    expect(after.documents ?? []).toEqual([]);
    expect(after.content).toMatch(/don't know/);
    const gone = await getJson(
      fx.s.url,
      `/v1/account/chatbots/${d.chatbotId}/knowledge_sources/${r.body.data.source_id}`,
      {},
      { authorization: `Bearer ${dToken}` },
    );
    expect(gone.status).toBe(404);
  });

  it("keeps answering from the snippets kind as from the chatbot's knowledge list", async () => {
    const e = await fx.s.account();
    const eToken = await idToken(fx.s.url, e);
    const r = await addSource(fx.s.url, eToken, e.chatbotId, {
      kind: "snippets",
      snippets: [{ title: "Gift cards", url: "https://shop.example/gift", snippet: "Gift cards never expire." }],
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    await settled(fx.s.url, eToken, e.chatbotId, r.body.data.source_id);
    const reply = await ask("Do gift cards expire?", e);
    expect(reply.content).toBe("Gift cards never expire.");
    expect(reply.documents![0]).toMatchObject({ title: "Gift cards", source_id: r.body.data.source_id });
  });
});
