import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { rankIndexed } from "../../src/domain/knowledge/index-cache.js";
import { KnowledgeService } from "../../src/domain/knowledge/knowledge-service.js";
import { stemWord } from "../../src/domain/knowledge/language.js";
import { editDistance, MAX_POSTINGS, PassageIndex } from "../../src/domain/knowledge/passage-index.js";
import { leadOf, rankHits } from "../../src/domain/knowledge/ranking.js";
import type { ChunkHit, ChunkInput } from "../../src/domain/knowledge/source.js";
import { openSqliteStore } from "../../src/storage/sqlite/store.js";
import { sourceRecord } from "../helpers/knowledge-source.js";

// The in-memory index a chatbot's searches are answered from once built (passage-index.ts, index-cache.ts): what it
// finds, its typo tolerance, its bound on the postings read, and that it never answers from passages already gone.

const dir = mkdtempSync(join(tmpdir(), "aiagent-passage-index-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const passage = (text: string, o: Partial<ChunkHit> = {}): ChunkHit => ({
  sourceId: "s",
  pageUrl: "https://help.example/",
  title: "Help",
  anchorUrl: "https://help.example/",
  headingPath: "",
  text,
  language: "english",
  position: 0,
  rank: 0,
  ...o,
});

describe("PassageIndex", () => {
  it("takes a word no passage holds for the vocabulary's word one typo away, the most frequent first", async () => {
    const index = await PassageIndex.build([
      passage("Stash your changes before switching branches"),
      passage("git stash pop brings the changes back"),
      passage("A stack of patches"),
    ]);
    expect(index.has("stash")).toBe(true);
    expect(index.has("stach")).toBe(false);
    expect(index.typoOf("stach", 5)).toEqual([{ language: "english", stem: "stash" }]);
    // Swapped letters change how a word stems: the word as written is corrected too.
    expect(index.typoOf("chnages", 5).map((t) => t.stem)).toEqual(["chang"]);
    // Short words are never corrected, nor words far from every term.
    expect(index.typoOf("stac", 5)).toEqual([]);
    expect(index.typoOf("bitcoin", 5)).toEqual([]);
    expect(editDistance("commit", "comit", 1)).toBe(1);
    expect(editDistance("rebase", "rebsae", 1)).toBe(1);
    expect(editDistance("rebase", "merge", 1)).toBe(2);
  });

  it("reads at most MAX_POSTINGS of a common word's passages, and still finds a rare word's", async () => {
    const many = Array.from({ length: MAX_POSTINGS + 500 }, (_, i) =>
      passage(`Branch notes number ${i}`, { position: i }),
    );
    const index = await PassageIndex.build([...many, passage("Branch protection rules", { position: 9999 })]);
    const hits = index.search(
      [
        { stems: [{ language: "english", stem: "branch" }], weight: 1, bit: 1 },
        { stems: [{ language: "english", stem: stemWord("protection", "english") }], weight: 1, bit: 2 },
      ],
      3,
    );
    expect(hits[0]!.hit.text).toBe("Branch protection rules");
    expect(hits[0]!.held).toBe(3);
    expect(hits).toHaveLength(3);
  });

  it("ranks the head of a page before the same words further down a page, in the index and among the store's", async () => {
    // The same words, fifth on one page and first on another (listed first, so a tie would put the fifth first).
    const text = "Refunds reach your card within five business days";
    const later = passage(text, { pageUrl: "https://help.example/policies", position: 4 });
    const head = passage(text, { pageUrl: "https://help.example/refunds", position: 0 });
    const index = await PassageIndex.build([later, head]);
    const stats = index.stats(["refund", "card"]);
    for (const ranked of [
      rankIndexed(index, ["refunds", "card"], 5),
      rankHits(["refunds", "card"], [later, head], stats),
    ]) {
      expect(ranked.map((r) => r.hit.pageUrl)).toEqual([
        "https://help.example/refunds",
        "https://help.example/policies",
      ]);
      expect(ranked[0]!.rank / ranked[1]!.rank).toBeCloseTo(leadOf(0) / leadOf(4), 5);
      // How sure the agent is does not depend on where the passage stands.
      expect(ranked[0]!.coverage).toBe(ranked[1]!.coverage);
    }
    expect(leadOf(0)).toBeCloseTo(1.2, 5);
  });

  it("ranks a question whose words touch more passages than its reused buffer holds, and the next one afresh", async () => {
    // Eight words, each in 1,000 passages of its own (said one to three times, amid more or fewer other words): a
    // question of all eight touches 8,000 passages, past the buffer a search starts with (4 × MAX_POSTINGS).
    const words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"];
    const many = Array.from({ length: 8000 }, (_, i) => {
      const w = words[i % 8]!;
      return passage(`${`${w} `.repeat(1 + (i % 3))}${"filler ".repeat(i % 7)}`, { position: i });
    });
    expect(8000).toBeGreaterThan(4 * MAX_POSTINGS);
    const index = await PassageIndex.build(many);
    const term = (w: string, bit: number) => ({ stems: [{ language: "english" as const, stem: w }], weight: 1, bit });
    const alone = words.map((w, i) => index.search([term(w, 2 ** i)], 1000));
    const all = index.search(
      words.map((w, i) => term(w, 2 ** i)),
      10,
    );
    // Each passage holds one word: its score is its score for that word alone, and the best ten are the best of all.
    const expected = alone
      .flat()
      .sort((a, b) => b.score - a.score || a.hit.position - b.hit.position)
      .slice(0, 10);
    expect(all.map((h) => [h.hit.position, h.score, h.held])).toEqual(
      expected.map((h) => [h.hit.position, h.score, h.held]),
    );
    // The accumulators were cleared: a question after it is ranked as on a fresh index.
    expect(index.search([term("delta", 2 ** 3)], 1000)).toEqual(alone[3]);
  });
});

describe("a chatbot's in-memory index", () => {
  it("answers as the store does once built, with typos, and never a passage of a source removed since", async () => {
    const store = openSqliteStore(join(dir, "k.db"));
    try {
      const a = {
        accountId: "00000000-0000-4000-8000-0000000000ac",
        chatbotId: "00000000-0000-4000-8000-00000000c0de",
      };
      const service = new KnowledgeService({
        knowledge: store.knowledge,
        clock: { now: () => Date.now() } as never,
        chatbotOf: async () => {
          throw new Error("not used");
        },
        chatbotById: async () => ({ chatbotId: a.chatbotId, knowledge: [] }) as never,
        reader: {} as never,
        exclusive: async (_n, fn) => fn(),
      });
      const chunk = (text: string, headingPath: string, position: number): ChunkInput => ({
        title: "Manual",
        anchorUrl: `https://help.example/#${position}`,
        headingPath,
        text,
        language: "english",
        position,
      });
      const stash = sourceRecord(a, { status: "indexed", version: 1, chunkCount: 2 });
      const other = sourceRecord(a, { status: "indexed", version: 1, chunkCount: 1 });
      await store.knowledge.addSource(stash, new Uint8Array());
      await store.knowledge.addSource(other, new Uint8Array());
      await store.knowledge.replacePage(stash, "https://help.example/stash", "h", [
        chunk("Stash your local changes to switch branches, then pop them back.", "Stashing", 0),
        chunk("Name a stash with a message to find it later.", "Naming", 1),
      ]);
      await store.knowledge.replacePage(other, "https://help.example/tags", "h", [
        chunk("A tag marks a release; delete a tag with the -d option.", "Tags", 0),
      ]);
      const question = "How do I stash my local changes?";
      const fromStore = await service.searchKnowledge(a.chatbotId, question, 3);
      expect(await service.warm(a.chatbotId)).toBe(true);
      const fromIndex = await service.searchKnowledge(a.chatbotId, question, 3);
      expect(fromIndex.map((p) => p.headingPath)).toEqual(fromStore.map((p) => p.headingPath));
      expect(fromIndex[0]).toMatchObject({ headingPath: "Stashing", sourceId: stash.sourceId, knowledgeVersion: 1 });
      expect(fromIndex[0]!.excerpt).toContain("Stash your local changes");
      // A typo of a word the knowledge holds finds its passage, but makes the agent no surer (the word counts as
      // one the knowledge lacks).
      const typo = await service.searchKnowledge(a.chatbotId, "how to delte a tag", 3, { minScore: 0 });
      expect(typo[0]?.headingPath).toBe("Tags");
      const spelled = await service.searchKnowledge(a.chatbotId, "how to delete a tag", 3, { minScore: 0 });
      expect(spelled[0]?.headingPath).toBe("Tags");
      expect(typo[0]!.score).toBeLessThan(spelled[0]!.score);
      // Gone from the store: never answered from the index built before.
      await store.knowledge.removeSource(a.chatbotId, other.sourceId);
      expect(await service.searchKnowledge(a.chatbotId, "how to delete a tag", 3, { minScore: 0 })).toEqual([]);
      expect(await service.warm(a.chatbotId)).toBe(true);
      expect(await service.searchKnowledge(a.chatbotId, "how to delete a tag", 3, { minScore: 0 })).toEqual([]);
      // A source being indexed: the store answers until it is done.
      await store.knowledge.progress(stash.sourceId, { status: "indexing", updatedAt: Date.now() });
      expect(await service.warm(a.chatbotId)).toBe(false);
      expect((await service.searchKnowledge(a.chatbotId, question, 3))[0]?.headingPath).toBe("Stashing");
    } finally {
      store.close();
    }
  });
});
