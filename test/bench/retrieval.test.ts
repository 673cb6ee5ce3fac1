import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  benchApp,
  docsCorpus,
  ingestDocs,
  loadQuestions,
  measureQuality,
  type Question,
} from "../../bench/retrieval.js";
import { suiteCanRun } from "../helpers/system-packages.js";

// The retrieval bench's parts on a few of its documents (the whole run is `npm run bench:retrieval`): the question
// set names real pages of the corpus, and the quality measure counts ranks and "I don't know" as documented.
// Skipped, with one line naming the package, where Debian's git-doc or nginx-doc is not installed.

const canRun = suiteCanRun(import.meta.filename, ["git-doc", "nginx-doc"]);
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe.runIf(canRun)("retrieval bench", () => {
  it("has at least 100 hand-written questions, each naming pages of the corpus or none", () => {
    const questions = loadQuestions();
    const ids = new Set(docsCorpus().map((d) => d.id));
    expect(questions.length).toBeGreaterThanOrEqual(100);
    for (const q of questions) for (const p of q.pages) expect(ids, `${q.question}: ${p}`).toContain(p);
    const languages = new Set(questions.map((q) => q.language));
    for (const l of ["en", "de", "fr", "es"]) expect(languages).toContain(l);
    expect(questions.filter((q) => q.pages.length === 0).length).toBeGreaterThanOrEqual(10);
    expect(new Set(questions.map((q) => q.question)).size).toBe(questions.length);
    // Split in two halves, each with every language and unanswerable questions: tuned on one, reported on both.
    for (const split of ["tune", "held-out"]) {
      const half = questions.filter((q) => q.split === split);
      expect(half.length, split).toBeGreaterThanOrEqual(Math.floor(questions.length / 2));
      for (const l of ["en", "de", "fr", "es"]) expect(half.some((q) => q.language === l)).toBe(true);
      expect(half.some((q) => q.pages.length === 0)).toBe(true);
    }
  });

  it("ingests pages as file sources and measures recall, MRR and the unanswerable share", {
    timeout: 180_000,
  }, async () => {
    const dir = mkdtempSync(join(tmpdir(), "aiagent-retrieval-test-"));
    dirs.push(dir);
    const wanted = ["git-doc/git-stash.html", "git-doc/git-clean.html", "git-doc/gitignore.html", "nginx-doc/php"];
    const files = docsCorpus().filter((d) => wanted.includes(d.id));
    const b = await benchApp(dir);
    try {
      const ingest = await ingestDocs(b, files);
      expect(ingest.failed).toEqual([]);
      expect(ingest.pageOf.size).toBe(4);
      const questions: Question[] = [
        { question: "how do I stash my changes for later", language: "en", pages: ["git-doc/git-stash.html"] },
        { question: "remove untracked files", language: "en", pages: ["git-doc/git-clean.html"] },
        { question: "how do I run PHP with php-fpm", language: "en", pages: ["nginx-doc/php"] },
        { question: "Can I pay with PayPal?", language: "en", pages: [] },
      ];
      const q = await measureQuality(
        (question, limit, minScore) =>
          b.app.knowledge.searchKnowledge(b.chatbotId, question, limit, minScore === undefined ? {} : { minScore }),
        (id) => ingest.pageOf.get(id),
        questions,
      );
      expect(q.byLanguage.en).toMatchObject({
        questions: 4,
        answerable: 3,
        recall_at_1: 1,
        recall_at_3: 1,
        mrr_at_10: 1,
        unanswerable: 1,
        dont_know_share: 1,
      });
      expect(q.misses).toEqual([]);
    } finally {
      await b.app.close();
    }
  });
});
