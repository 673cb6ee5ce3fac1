import { readFileSync } from "node:fs";
import type { KnowledgeSnippet } from "../../src/domain/account/repository.js";

/** One question of the set: which knowledge it is asked of and the snippet (title) that should answer, or null. */
export interface Question {
  kb: string;
  q: string;
  expect: string | null;
  /** Written after the matching was tuned on the others. */
  heldOut?: boolean;
}

const root = new URL("../../", import.meta.url);
const set = JSON.parse(readFileSync(new URL("test/agent/questions.json", root), "utf8")) as {
  knowledge: Record<string, string | KnowledgeSnippet[]>;
  questions: Question[];
};

export const QUESTIONS = set.questions;

/** The knowledge a question is asked of (a file of the checkout, or the snippets listed in the set). */
export function knowledge(kb: string): KnowledgeSnippet[] {
  const k = set.knowledge[kb]!;
  return typeof k === "string" ? (JSON.parse(readFileSync(new URL(k, root), "utf8")) as KnowledgeSnippet[]) : k;
}

/** Scores a ranking: a question counts when the first snippet is the expected one (or none, when none is expected). */
export function score(
  rank: (q: string, k: KnowledgeSnippet[]) => KnowledgeSnippet[],
  which: (q: Question) => boolean = () => true,
): {
  right: number;
  total: number;
  wrong: string[];
} {
  const wrong: string[] = [];
  const questions = QUESTIONS.filter(which);
  for (const q of questions) {
    const got = rank(q.q, knowledge(q.kb))[0]?.title ?? null;
    if (got !== q.expect)
      wrong.push(`[${q.kb}] ${q.q} → ${got ?? "(no answer)"}, expected ${q.expect ?? "(no answer)"}`);
  }
  return { right: questions.length - wrong.length, total: questions.length, wrong };
}
