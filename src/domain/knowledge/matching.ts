import type { KnowledgeSnippet } from "../account/repository.js";
import { detectLanguage, queryWords, stemWord, type TextLanguage, termsOf } from "./language.js";
import { ANSWER_THRESHOLD, excerptOf, type Passage, scoreAgainst, scoredTerms } from "./scoring.js";

// Which knowledge snippets a question is about, for any client's text: the share of the question's content words
// (stop words of English, German, French and Spanish left out) each snippet holds, stemmed in the snippet's language
// (scoring.ts), the same measure the indexed sources are scored by. No vocabulary of any one business.

/** A snippet as scored: its language, and its terms (stemmed in that language) as the measures read them. */
interface SnippetTerms {
  language: TextLanguage;
  /** The title's terms. */
  title: Set<string>;
  /** The title's and the snippet's terms. */
  all: Set<string>;
  /** What passageScore matches a question's words against (scoredTerms). */
  scored: Set<string>;
}

/**
 * Each snippet of a list as scored, kept while the list is (a chatbot's record is cached): every question used to
 * split, stem and set up every snippet's words again, most of what a built-in agent's reply cost.
 */
const snippetTerms = new WeakMap<KnowledgeSnippet[], SnippetTerms[]>();

function termsOfList(knowledge: KnowledgeSnippet[]): SnippetTerms[] {
  let l = snippetTerms.get(knowledge);
  if (!l) {
    l = knowledge.map((k) => {
      const language = detectLanguage(`${k.title} ${k.snippet}`);
      return {
        language,
        title: new Set(termsOf(k.title, language)),
        all: new Set(termsOf(`${k.title} ${k.snippet}`, language)),
        scored: scoredTerms({ title: k.title, headingPath: "", text: k.snippet, language }),
      };
    });
    snippetTerms.set(knowledge, l);
  }
  return l;
}

/** The snippets that answer the question (scoring at least `minScore`), best first, as passages with their score. */
export function scoreSnippets(question: string, knowledge: KnowledgeSnippet[], minScore = ANSWER_THRESHOLD): Passage[] {
  if (knowledge.length === 0) return [];
  const termSets = termsOfList(knowledge);
  const words = queryWords(question);
  // Between equal scores, BM25's idea: a word few snippets hold weighs more, and more in the title.
  const idf = (w: string) => {
    const df = termSets.filter((t) => t.all.has(stemWord(w, t.language))).length;
    return Math.log(1 + (knowledge.length - df + 0.5) / (df + 0.5));
  };
  const weight = new Map(words.map((w) => [w, idf(w)]));
  return knowledge
    .map((k, i) => {
      const terms = termSets[i]!;
      const language = terms.language;
      const score = scoreAgainst(words, terms.scored, language);
      let tie = 0;
      for (const w of words) {
        const t = stemWord(w, language);
        if (terms.all.has(t)) tie += weight.get(w)! * (terms.title.has(t) ? 2 : 1);
      }
      return {
        sourceId: "",
        sourceTitle: k.title,
        title: k.title,
        pageUrl: k.url,
        anchorUrl: k.url,
        headingPath: "",
        text: k.snippet,
        excerpt: score > 0 ? excerptOf(question, k.snippet, language) : "",
        score,
        knowledgeVersion: 0,
        i,
        tie,
      };
    })
    .filter((p) => p.score >= minScore && p.score > 0)
    .sort((a, b) => b.score - a.score || b.tie - a.tie || a.i - b.i)
    .map(({ i: _, tie: __, ...p }) => p);
}

/** The snippets sharing terms with the question, best first (ties keep their configured order). */
export function rankSnippets(question: string, knowledge: KnowledgeSnippet[]): KnowledgeSnippet[] {
  return scoreSnippets(question, knowledge, Number.MIN_VALUE).map(
    (p) => knowledge.find((k) => k.url === p.pageUrl && k.title === p.title && k.snippet === p.text)!,
  );
}
