import MiniSearch from "minisearch";
import { stemmer } from "stemmer";
import type { KnowledgeSnippet } from "../account/repository.js";

// Which knowledge snippets a question is about, ranked by MiniSearch (BM25+) over the snippets' titles (boosted) and
// texts, with Porter stemming ("ships", "shipped", "shipping" are one term) and a small vocabulary of the topics a
// shop's customers ask about, so that "Where is my parcel?" finds a snippet about orders and "arrived damaged" one
// about replacements although they share no word. The question set in test/agent/questions.json measures it.

const STOP = new Set(
  "the a an and or of to in is are am be i you my your it its for on with do does did how what can could me we our us this that there at by from as was were has have had will would not no yes if".split(
    " ",
  ),
);

/** Words saying something went wrong: what the customer needs is about them more than about the nouns around them. */
const PROBLEM_WORDS = ["damage", "damaged", "broken", "break", "defect", "defective", "faulty", "wrong", "replacement"];

/**
 * Words that name a topic; a question and a snippet sharing a topic are related even without a shared word. A word
 * may name several ("damaged" is a damage question, and a return when no snippet speaks of damage).
 */
const TOPICS: Record<string, string[]> = {
  shipping: ["ship", "shipment", "shipping", "deliver", "delivery", "dispatch", "dispatched", "courier", "postage"],
  tracking: ["track", "tracking", "parcel", "package", "status", "received", "receive"],
  abroad: ["abroad", "international", "country", "countries", "customs", "duty", "duties", "uk", "overseas"],
  returns: ["return", "refund", "money", "reimburse", "back", "exchange", "fit", ...PROBLEM_WORDS],
  damage: PROBLEM_WORDS,
  hours: ["hour", "open", "opening", "close", "closed", "weekend", "saturday", "sunday", "available", "call", "time"],
  payment: ["pay", "payment", "card", "credit", "invoice", "bill", "charge", "paypal", "visa", "mastercard"],
  account: ["account", "password", "login", "log", "sign", "email", "e-mail", "reset", "forgot"],
};
const TOPICS_OF = new Map<string, string[]>();
for (const [topic, words] of Object.entries(TOPICS))
  for (const w of words) {
    const stem = stemmer(w);
    TOPICS_OF.set(stem, [...new Set([...(TOPICS_OF.get(stem) ?? []), `#${topic}`])]);
  }
/**
 * How much a problem word (and the topics it names) weighs in a question: the smallest weight with which the
 * question set answers "My parcel arrived damaged" from the returns snippet of the demo knowledge, not the tracking
 * one (whose title shares "parcel").
 */
const PROBLEM_WEIGHT = 6;
/** The problem words' stems. */
const PROBLEM = new Set(PROBLEM_WORDS.map((w) => stemmer(w)));

/** A word as indexed: nothing for a stop word, else its stem and the topics it names (as "#topic"). */
function processTerm(word: string): string[] | null {
  const w = word.toLowerCase();
  if (w.length < 2 || STOP.has(w)) return null;
  const stem = stemmer(w);
  return [stem, ...(TOPICS_OF.get(stem) ?? [])];
}

/** Splits on anything that is not a letter or digit (MiniSearch's default splits on ASCII punctuation only). */
const tokenize = (text: string) => text.split(/[^\p{L}\p{N}]+/u).filter(Boolean);

interface Doc {
  id: number;
  title: string;
  snippet: string;
}

/** The index of one chatbot's knowledge, kept while its snippets list is (a chatbot's record is cached). */
const indexes = new WeakMap<KnowledgeSnippet[], MiniSearch<Doc>>();

function indexOf(knowledge: KnowledgeSnippet[]): MiniSearch<Doc> {
  let index = indexes.get(knowledge);
  if (!index) {
    index = new MiniSearch<Doc>({ fields: ["title", "snippet"], tokenize, processTerm });
    index.addAll(knowledge.map((k, id) => ({ id, title: k.title, snippet: k.snippet })));
    indexes.set(knowledge, index);
  }
  return index;
}

/** The snippets sharing terms with the question, best first (ties keep their configured order). */
export function rankSnippets(question: string, knowledge: KnowledgeSnippet[]): KnowledgeSnippet[] {
  if (knowledge.length === 0) return [];
  const hits = indexOf(knowledge).search(question, {
    boost: { title: 2 },
    // A problem word and the topics it names (they follow its stem in the question's terms) weigh more.
    boostTerm: (_term, i, terms) => {
      let j = i;
      while (j > 0 && terms[j]!.startsWith("#")) j--;
      return PROBLEM.has(terms[j]!) ? PROBLEM_WEIGHT : 1;
    },
    combineWith: "OR",
  });
  return hits
    .sort((a, b) => b.score - a.score || (a.id as number) - (b.id as number))
    .map((h) => knowledge[h.id as number]!);
}
