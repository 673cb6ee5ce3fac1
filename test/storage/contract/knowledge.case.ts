import { describe, expect, it } from "vitest";
import { newId } from "../../../src/domain/ids.js";
import type { TextLanguage } from "../../../src/domain/knowledge/language.js";
import { queryWords } from "../../../src/domain/knowledge/language.js";
import type { ChunkInput } from "../../../src/domain/knowledge/source.js";
import { sourceRecord } from "../../helpers/knowledge-source.js";
import { account } from "./fixtures.js";
import type { Harness } from "./harness.js";

const source = sourceRecord;

const chunk = (text: string, language: TextLanguage = "english", headingPath = ""): ChunkInput => ({
  title: "Manual",
  anchorUrl: "https://help.example/manual#x",
  headingPath,
  text,
  language,
  position: 0,
});

const search = (h: Harness, chatbotId: string, q: string) =>
  h.store.knowledge.search({ chatbotId, words: queryWords(q), limit: 10 });

/** Knowledge sources in storage: sources, their pages' hashes, passages and the full-text search over them. */
export function knowledgeCases(h: () => Harness) {
  describe("knowledge", () => {
    it("keeps a source with what it was made from, lists a chatbot's oldest first, and finds it pending", async () => {
      const { store } = h();
      const a = await account(store);
      const b = await account(store);
      const one = source(a, { createdAt: 20 });
      const two = source(a, { createdAt: 10, kind: "page", url: "https://help.example/" });
      await store.knowledge.addSource(one, new Uint8Array([1, 2, 3]));
      await store.knowledge.addSource(two, new Uint8Array());
      await store.knowledge.addSource(source(b), new Uint8Array());
      expect((await store.knowledge.listSources(a.chatbotId, 10)).map((s) => s.sourceId)).toEqual([
        two.sourceId,
        one.sourceId,
      ]);
      expect(await store.knowledge.getSource(a.chatbotId, one.sourceId)).toEqual(one);
      expect(await store.knowledge.getSource(b.chatbotId, one.sourceId)).toBeUndefined();
      expect([...((await store.knowledge.content(one.sourceId)) ?? [])]).toEqual([1, 2, 3]);
      const pending = await store.knowledge.pending(10);
      expect(pending.map((p) => p.sourceId)).toContain(one.sourceId);
      expect(
        await store.knowledge.progress(one.sourceId, { status: "indexed", chunkCount: 4, version: 2, updatedAt: 30 }),
      ).toBe(true);
      const got = await store.knowledge.getSource(a.chatbotId, one.sourceId);
      expect(got).toMatchObject({ status: "indexed", chunkCount: 4, version: 2, updatedAt: 30, title: "Manual" });
      expect((await store.knowledge.pending(10)).map((p) => p.sourceId)).not.toContain(one.sourceId);
    });

    it("answers the sources due for their scheduled re-sync: an interval set, indexed or failed, and it passed", async () => {
      const { store } = h();
      const a = await account(store);
      const hour = 3_600_000;
      const at = 1_000_000_000_000;
      const due = source(a, { kind: "page", status: "indexed", resyncIntervalHours: 2, updatedAt: at });
      const failed = source(a, { kind: "site", status: "failed", resyncIntervalHours: 1, updatedAt: at + hour });
      const later = source(a, { kind: "page", status: "indexed", resyncIntervalHours: 5, updatedAt: at - 1 });
      const never = source(a, { kind: "page", status: "indexed", resyncIntervalHours: 0, updatedAt: at });
      const busy = source(a, { kind: "page", status: "indexing", resyncIntervalHours: 1, updatedAt: at });
      for (const s of [due, failed, later, never, busy]) await store.knowledge.addSource(s, new Uint8Array());
      expect(await store.knowledge.getSource(a.chatbotId, due.sourceId)).toMatchObject({ resyncIntervalHours: 2 });
      const ids = async (now: number) =>
        (await store.knowledge.dueForResync(now, 100))
          .filter((d) => d.chatbotId === a.chatbotId)
          .map((d) => d.sourceId);
      expect(await ids(at + 2 * hour - 1)).toEqual([]);
      expect(await ids(at + 2 * hour)).toEqual([due.sourceId, failed.sourceId]);
      expect(await ids(at + 5 * hour)).toEqual([later.sourceId, due.sourceId, failed.sourceId]);
      // A schedule changed, or switched off; another chatbot's source is not changed.
      expect(await store.knowledge.setResyncInterval(a.chatbotId, later.sourceId, 0)).toBe(true);
      expect(await store.knowledge.setResyncInterval(newId(), due.sourceId, 0)).toBe(false);
      expect(await ids(at + 5 * hour)).toEqual([due.sourceId, failed.sourceId]);
    });

    it("finds a chatbot's passages by stemmed words, in each passage's language, never another chatbot's", async () => {
      const { store } = h();
      const a = await account(store);
      const b = await account(store);
      const s = source(a);
      await store.knowledge.addSource(s, new Uint8Array());
      await store.knowledge.replacePage(s, "https://help.example/returns", "h1", [
        chunk("You can return any item within 30 days for a full refund.", "english", "Returns"),
        { ...chunk("Orders are shipped within two business days.", "english", "Shipping"), position: 1 },
      ]);
      await store.knowledge.replacePage(s, "https://hilfe.example/versand", "h2", [
        chunk("Die Lieferungen erfolgen innerhalb von zwei Werktagen.", "german", "Versand"),
      ]);
      const other = source(b);
      await store.knowledge.addSource(other, new Uint8Array());
      await store.knowledge.replacePage(other, "https://b.example/", "h3", [chunk("Refunds are never given.")]);
      // "refunds" and "returning" stem to the passage's "refund" and "return"
      const [top] = await search(h(), a.chatbotId, "returning an item for refunds");
      expect(top).toMatchObject({
        sourceId: s.sourceId,
        headingPath: "Returns",
        pageUrl: "https://help.example/returns",
      });
      expect(top!.rank).toBeGreaterThan(0);
      expect((await search(h(), a.chatbotId, "shipping")).map((c) => c.headingPath)).toEqual(["Shipping"]);
      // German stemming: "Lieferung" finds "Lieferungen"
      expect((await search(h(), a.chatbotId, "Wann kommt meine Lieferung?")).map((c) => c.headingPath)).toEqual([
        "Versand",
      ]);
      expect(await search(h(), a.chatbotId, "bitcoin")).toEqual([]);
      expect((await search(h(), b.chatbotId, "refund")).every((c) => c.sourceId === other.sourceId)).toBe(true);
    });

    it("replaces one page's passages, keeps its hash, drops pages no longer there, and counts passages", async () => {
      const { store } = h();
      const a = await account(store);
      const s = source(a);
      await store.knowledge.addSource(s, new Uint8Array());
      await store.knowledge.replacePage(s, "https://x.example/a", "ha", [chunk("alpha apples")]);
      await store.knowledge.replacePage(s, "https://x.example/b", "hb", [chunk("beta bananas"), chunk("beta berries")]);
      expect(await store.knowledge.chunkCount(s.sourceId)).toBe(3);
      await store.knowledge.replacePage(s, "https://x.example/b", "hb2", [chunk("gamma grapes")]);
      expect(await store.knowledge.pageHashes(s.sourceId)).toEqual(
        new Map([
          ["https://x.example/a", "ha"],
          ["https://x.example/b", "hb2"],
        ]),
      );
      expect(await search(h(), a.chatbotId, "bananas")).toEqual([]);
      expect(await search(h(), a.chatbotId, "grapes")).toHaveLength(1);
      await store.knowledge.keepPages(s.sourceId, ["https://x.example/b"]);
      expect(await search(h(), a.chatbotId, "apples")).toEqual([]);
      expect([...(await store.knowledge.pageHashes(s.sourceId)).keys()]).toEqual(["https://x.example/b"]);
      expect(await store.knowledge.chunkCount(s.sourceId)).toBe(1);
    });

    it("removes a source with all its passages: none is found again, and a page written after is refused", async () => {
      const { store } = h();
      const a = await account(store);
      const s = source(a);
      const kept = source(a);
      await store.knowledge.addSource(s, new Uint8Array());
      await store.knowledge.addSource(kept, new Uint8Array());
      await store.knowledge.replacePage(s, "https://x.example/", "h", [chunk("warranty claims by e-mail")]);
      await store.knowledge.replacePage(kept, "https://y.example/", "h", [chunk("warranty lasts two years")]);
      expect(await store.knowledge.removeSource(a.chatbotId, s.sourceId)).toBe(true);
      expect(await store.knowledge.removeSource(a.chatbotId, s.sourceId)).toBe(false);
      expect((await search(h(), a.chatbotId, "warranty")).map((c) => c.sourceId)).toEqual([kept.sourceId]);
      expect(await store.knowledge.replacePage(s, "https://x.example/", "h", [chunk("warranty again")])).toBe(false);
      expect((await search(h(), a.chatbotId, "warranty")).map((c) => c.sourceId)).toEqual([kept.sourceId]);
      expect(await store.knowledge.getSource(a.chatbotId, s.sourceId)).toBeUndefined();
      expect(await store.knowledge.content(s.sourceId)).toBeUndefined();
    });

    it("moves a source to another chatbot key, queued again; only from the key it is under", async () => {
      const { store } = h();
      const a = await account(store);
      const draftKey = newId();
      const s = { ...source(a), chatbotId: draftKey, status: "indexed" as const };
      await store.knowledge.addSource(s, new TextEncoder().encode("[]"));
      await store.knowledge.replacePage(s, "https://x.example/", "h", [chunk("gift cards never expire")]);
      expect((await search(h(), draftKey, "gift")).map((c) => c.sourceId)).toEqual([s.sourceId]);
      expect(await search(h(), a.chatbotId, "gift")).toEqual([]);
      // Its passages dropped first (as the domain does), then moved: listed under its new key, queued, nothing found.
      await store.knowledge.keepPages(s.sourceId, []);
      expect(await store.knowledge.moveSource(s.sourceId, a.chatbotId, draftKey, 99)).toBe(false);
      expect(await store.knowledge.moveSource(s.sourceId, draftKey, a.chatbotId, 99)).toBe(true);
      expect(await store.knowledge.listSources(draftKey, 10)).toEqual([]);
      const moved = await store.knowledge.getSource(a.chatbotId, s.sourceId);
      expect(moved).toMatchObject({ chatbotId: a.chatbotId, status: "queued", updatedAt: 99 });
      expect((await store.knowledge.pending(10)).map((p) => p.chatbotId)).toContain(a.chatbotId);
      expect((await store.knowledge.termStats(draftKey, ["gift"])).df.size).toBe(0);
      expect(await store.knowledge.content(s.sourceId)).toEqual(new TextEncoder().encode("[]"));
    });

    it("reads a chatbot's passages in the order stored, a page at a time, and only its own", async () => {
      const { store } = h();
      const [a, b] = [await account(store), await account(store)];
      const s = source(a);
      for (const x of [s, source(b)]) await store.knowledge.addSource(x, new Uint8Array());
      await store.knowledge.replacePage(s, "https://x.example/a", "h", [
        { ...chunk("first", "english", "One"), position: 0 },
        { ...chunk("second", "german", "Zwei"), position: 1 },
      ]);
      await store.knowledge.replacePage(s, "https://x.example/b", "h", [{ ...chunk("third"), position: 0 }]);
      const all = await store.knowledge.passages(a.chatbotId, 0, 10);
      expect(all.map((p) => [p.pageUrl, p.text, p.language, p.headingPath, p.position, p.sourceId])).toEqual([
        ["https://x.example/a", "first", "english", "One", 0, s.sourceId],
        ["https://x.example/a", "second", "german", "Zwei", 1, s.sourceId],
        ["https://x.example/b", "third", "english", "", 0, s.sourceId],
      ]);
      expect((await store.knowledge.passages(a.chatbotId, 1, 1)).map((p) => p.text)).toEqual(["second"]);
      expect(await store.knowledge.passages(a.chatbotId, 3, 10)).toEqual([]);
      expect(await store.knowledge.passages(b.chatbotId, 0, 10)).toEqual([]);
    });

    it("counts the passages holding each term per chatbot, through replacements, kept pages and removal", async () => {
      const { store } = h();
      const a = await account(store);
      const b = await account(store);
      const s = source(a);
      const t = source(a);
      await store.knowledge.addSource(s, new Uint8Array());
      await store.knowledge.addSource(t, new Uint8Array());
      await store.knowledge.addSource(source(b), new Uint8Array());
      const stats = async (chatbotId: string) => {
        const r = await store.knowledge.termStats(chatbotId, ["refund", "card", "parcel", "bitcoin"]);
        return { chunks: r.chunks, df: Object.fromEntries(r.df) };
      };
      await store.knowledge.replacePage(s, "https://x.example/a", "h", [
        chunk("Refunds are paid to your card; refunds take days"),
        chunk("A parcel leaves the warehouse"),
      ]);
      await store.knowledge.replacePage(t, "https://y.example/", "h", [chunk("Refund by card or bank transfer")]);
      // Each passage counts once per term, however often it holds it; another chatbot's are not counted.
      expect(await stats(a.chatbotId)).toEqual({ chunks: 3, df: { refund: 2, card: 2, parcel: 1 } });
      expect(await stats(b.chatbotId)).toEqual({ chunks: 0, df: {} });
      await store.knowledge.replacePage(s, "https://x.example/a", "h2", [chunk("A parcel leaves at nine")]);
      expect(await stats(a.chatbotId)).toEqual({ chunks: 2, df: { refund: 1, card: 1, parcel: 1 } });
      await store.knowledge.keepPages(s.sourceId, []);
      expect(await stats(a.chatbotId)).toEqual({ chunks: 1, df: { refund: 1, card: 1 } });
      await store.knowledge.removeSource(a.chatbotId, t.sourceId);
      expect(await stats(a.chatbotId)).toEqual({ chunks: 0, df: {} });
    });

    it("finds the passages nearest an embedding, most similar first, only the chatbot's and only those with one", async () => {
      const { store } = h();
      const a = await account(store);
      const b = await account(store);
      const s = source(a);
      const other = source(b);
      await store.knowledge.addSource(s, new Uint8Array());
      await store.knowledge.addSource(other, new Uint8Array());
      const v = (...xs: number[]) => Float32Array.from(xs);
      await store.knowledge.replacePage(s, "https://x.example/", "h", [
        { ...chunk("refunds"), position: 0, vector: v(1, 0, 0) },
        { ...chunk("delivery"), position: 1, vector: v(0.6, 0.8, 0) },
        { ...chunk("no vector"), position: 2 },
      ]);
      await store.knowledge.replacePage(other, "https://y.example/", "h", [{ ...chunk("theirs"), vector: v(1, 0, 0) }]);
      const near = await store.knowledge.nearest({ chatbotId: a.chatbotId, vector: v(1, 0.1, 0), limit: 5 });
      expect(near.map((n) => n.text)).toEqual(["refunds", "delivery"]);
      expect(near[0]!.rank).toBeGreaterThan(near[1]!.rank);
      expect(near[0]!.rank).toBeCloseTo(0.995, 2);
      expect(near[0]).toMatchObject({ sourceId: s.sourceId, pageUrl: "https://x.example/", position: 0 });
      expect(await store.knowledge.nearest({ chatbotId: a.chatbotId, vector: v(1, 0, 0), limit: 1 })).toHaveLength(1);
    });
  });
}
