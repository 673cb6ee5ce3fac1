import { describe, expect, it } from "vitest";
import { serverForFile } from "../helpers/file-server.js";
import { addMember, idToken, issueTokens, send } from "../helpers/flows.js";
import { getJson, postJson, requestJson } from "../helpers/http.js";

// Issue 45, search across messages: the customer who mentioned order A-1001 last week is found by those words,
// whatever their case and accents; filters narrow it; notes only for the account's people; another account's
// words find nothing. Runs on SQLite and on PostgreSQL (ON_POSTGRES).

// Fresh ID tokens in each test: the first one moves the clock a week back and forward again.
const fx = serverForFile({ accounts: 2 });
const bearer = (t: string) => ({ authorization: `Bearer ${t}` });
const DAY = 86_400_000;
const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);

type Result = {
  kind: string;
  id: string;
  conversation_id: string;
  role: string;
  snippet: { text: string; match?: boolean }[];
  snippet_html: string;
  created_at: string;
  chatbot_name: string;
};
async function search(token: string, query: Record<string, string | number>) {
  const r = await getJson(fx.s.url, "/search_conversations", query, bearer(token));
  return r as { status: number; body: { data: { results: Result[]; next_page_token?: string } } & Record<string, any> };
}
const marked = (r: Result) => r.snippet.filter((p) => p.match).map((p) => p.text);

describe("search across messages and notes", () => {
  it("finds last week's message by a word, folded for case and accents, with the words marked and escaped", async () => {
    const s = fx.s;
    const weekAgo = Date.now() - 7 * DAY;
    s.clock.freezeAt(weekAgo);
    let t: Awaited<ReturnType<typeof issueTokens>>;
    let conversationId: string;
    try {
      t = await issueTokens(s.url, fx.a, "ada", { contact_name: "Ada Lovelace" });
      ({ conversation_id: conversationId } = await send(
        s.url,
        t.access_token,
        "Où est ma commande A-1001? Crème brûlée <b>x</b> for the Café",
      ));
    } finally {
      // Back to the real time (resume alone would run on from a week ago).
      s.clock.freezeAt(Date.now());
      s.clock.resume();
    }
    const owner = await idToken(s.url, fx.a);

    const found = await search(owner, { query: "a-1001" });
    expect(found.status).toBe(200);
    const hit = found.body.data.results.find((r) => r.kind === "message" && r.role === "user");
    expect(hit).toMatchObject({ conversation_id: conversationId, contact_name: "Ada Lovelace", user_id: "ada" });
    expect(day(Date.parse(hit!.created_at))).toBe(day(weekAgo));
    expect(marked(hit!)).toEqual(["A", "1001"]);

    // Accents and case either way: the query folded as the text was.
    for (const query of ["CREME brulee", "crème BRÛLÉE", "cafe", "ou EST", "commande"]) {
      const r = await search(owner, { query });
      expect(
        r.body.data.results.map((x) => x.id),
        query,
      ).toContain(hit!.id);
    }
    // Every word must occur, as a whole word; the last one (being typed) as a prefix: "comm" finds "commande".
    const ids = async (query: string) => (await search(owner, { query })).body.data.results.map((x) => x.id);
    expect(await ids("comm")).toContain(hit!.id);
    expect(await ids("commande 100")).toContain(hit!.id);
    expect(await ids("comm 1001")).not.toContain(hit!.id);
    expect((await search(owner, { query: "commande nowhere" })).body.data.results).toEqual([]);

    // The snippet is text: the page's markup is not markup, and the HTML form escapes it.
    const brulee = (await search(owner, { query: "brulee" })).body.data.results.find((r) => r.id === hit!.id)!;
    expect(marked(brulee)).toEqual(["brûlée"]);
    expect(brulee.snippet.map((p) => p.text).join("")).toContain("<b>x</b>");
    expect(brulee.snippet_html).toContain("<mark>brûlée</mark>");
    expect(brulee.snippet_html).toContain("&lt;b&gt;x&lt;/b&gt;");
    expect(brulee.snippet_html).not.toContain("<b>");

    // The date range: last week's day finds it, today does not.
    const today = day(Date.now());
    expect(
      (await search(owner, { query: "commande", from: day(weekAgo), to: day(weekAgo) })).body.data.results.map(
        (x) => x.id,
      ),
    ).toContain(hit!.id);
    expect((await search(owner, { query: "commande", from: today })).body.data.results).toEqual([]);
  });

  it("filters by chatbot, status and who holds the conversation, and pages through the hits", async () => {
    const s = fx.s;
    const owner = await idToken(s.url, fx.a);
    const t = await issueTokens(s.url, fx.a, "grace", { contact_name: "Grace Hopper" });
    const { conversation_id } = await send(s.url, t.access_token, "zebra parcel one");
    for (const n of ["two", "three", "four"]) await send(s.url, t.access_token, `zebra parcel ${n}`, conversation_id);

    const all = (await search(owner, { query: "zebra" })).body.data.results.filter((r) => r.role === "user");
    expect(all).toHaveLength(4);
    // Newest first.
    expect(marked(all[0]!)).toEqual(["zebra"]);
    expect(all.map((r) => r.snippet.map((p) => p.text).join(""))).toEqual([
      "zebra parcel four",
      "zebra parcel three",
      "zebra parcel two",
      "zebra parcel one",
    ]);

    // Pages of 2 (user messages only by the word "parcel"), then the next, then none.
    const seen: string[] = [];
    let token = "";
    for (let i = 0; i < 10; i++) {
      const page = await search(owner, { query: "zebra parcel", limit: 2, ...(token ? { page_token: token } : {}) });
      expect(page.status).toBe(200);
      seen.push(...page.body.data.results.map((r) => r.id));
      token = page.body.data.next_page_token ?? "";
      if (!token) break;
    }
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen).toEqual(expect.arrayContaining(all.map((r) => r.id)));

    const other = "00000000-0000-4000-8000-000000000000";
    expect(
      (await search(owner, { query: "zebra", chatbot_id: fx.a.chatbotId })).body.data.results.length,
    ).toBeGreaterThan(0);
    expect((await search(owner, { query: "zebra", chatbot_id: other })).body.data.results).toEqual([]);
    expect((await search(owner, { query: "zebra", status: "closed" })).body.data.results).toEqual([]);
    expect((await search(owner, { query: "zebra", operator: "ai_agent" })).body.data.results.length).toBeGreaterThan(0);

    await postJson(s.url, "/take_over_conversation", { conversation_id }, bearer(owner));
    await postJson(s.url, "/close_conversation", { conversation_id }, bearer(owner));
    const mine = await search(owner, { query: "zebra", operator: fx.a.email.toUpperCase(), status: "closed" });
    expect(mine.body.data.results.filter((r) => r.role === "user")).toHaveLength(4);
    expect((await search(owner, { query: "zebra", operator: "ai_agent" })).body.data.results).toEqual([]);
  });

  it("finds notes for the account's people only, never for a customer's token", async () => {
    const s = fx.s;
    const t = await issueTokens(s.url, fx.a, "linus");
    const { conversation_id } = await send(s.url, t.access_token, "hello there");
    const operator = await addMember(s.url, await idToken(s.url, fx.a), "op-search@shop.example");
    const note = await postJson(
      s.url,
      "/add_conversation_note",
      { conversation_id, content: "Refund approved by Zoë for invoice 77" },
      bearer(operator.idToken),
    );
    expect(note.status).toBe(200);
    const r = await search(operator.idToken, { query: "zoe invoice" });
    expect(r.status).toBe(200);
    expect(r.body.data.results).toEqual([
      expect.objectContaining({ kind: "note", role: "note", author_email: "op-search@shop.example", conversation_id }),
    ]);
    expect(marked(r.body.data.results[0]!)).toEqual(["Zoë", "invoice"]);
    // The chatbot by its name as it is now, for an operator too (the chatbots' list is the admins'): the console
    // fills {{chatbot.name}} from it for a conversation opened from a result.
    expect(r.body.data.results[0]!.chatbot_name).toBe("Test bot");
    const renamed = await requestJson(
      s.url,
      "PATCH",
      `/v1/account/chatbots/${fx.a.chatbotId}`,
      bearer(await idToken(s.url, fx.a)),
      { name: "Returns desk" },
    );
    expect(renamed.status).toBe(200);
    try {
      const again = await search(operator.idToken, { query: "zoe invoice" });
      expect(again.body.data.results.map((x) => x.chatbot_name)).toEqual(["Returns desk"]);
    } finally {
      await requestJson(s.url, "PATCH", `/v1/account/chatbots/${fx.a.chatbotId}`, bearer(await idToken(s.url, fx.a)), {
        name: "Test bot",
      });
    }
    // The customer's access token is not a credential of the search (nor of notes).
    const frame = await getJson(s.url, "/search_conversations", { query: "zoe", access_token: t.access_token });
    expect(frame.status).toBe(401);
    expect((await search(t.access_token, { query: "zoe" })).status).toBe(401);
  });

  it("finds nothing of another account, even by its own words", async () => {
    const s = fx.s;
    const tb = await issueTokens(s.url, fx.b, "secret-customer");
    const { user_message } = await send(s.url, tb.access_token, "quetzalcoatl confidential plan");
    const byB = await search(await idToken(s.url, fx.b), { query: "quetzalcoatl" });
    expect(byB.body.data.results.map((r) => r.id)).toContain(user_message.message_id);
    const byA = await search(await idToken(s.url, fx.a), { query: "quetzalcoatl confidential" });
    expect(byA.status).toBe(200);
    expect(byA.body.data.results).toEqual([]);
  });

  it("names the field of a bad request", async () => {
    const cases: [Record<string, string | number>, string][] = [
      [{ query: "" }, "query"],
      [{ query: "!!! ???" }, "query"],
      [{ query: "x", status: "open" }, "status"],
      [{ query: "x", chatbot_id: "nope" }, "chatbot_id"],
      [{ query: "x", operator: "not an email" }, "operator"],
      [{ query: "x", from: "2026-02-30" }, "from"],
      [{ query: "x", from: "2026-03-02", to: "2026-03-01" }, "to"],
      [{ query: "x", limit: 51 }, "limit"],
      [{ query: "x", page_token: "garbage!" }, "page_token"],
    ];
    const owner = await idToken(fx.s.url, fx.a);
    for (const [query, field] of cases) {
      const r = await search(owner, query);
      expect(r.status, JSON.stringify(query)).toBe(400);
      expect(JSON.stringify(r.body), JSON.stringify(query)).toContain(field);
    }
  });
});
