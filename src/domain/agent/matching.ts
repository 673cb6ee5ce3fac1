import type { KnowledgeSnippet } from "../account/repository.js";

// Which knowledge snippets a question is about: shared words after light stemming, plus shared topics, so that
// "Where is my parcel?" finds a snippet about shipping and orders although the two share no word.

const STOP = new Set(
  "the a an and or of to in is are am be i you my your it its for on with do does did how what can could me we our us this that there at by from as".split(
    " ",
  ),
);

/** Words that name one topic a shop's customers ask about; a question and a snippet sharing a topic are related. */
const TOPICS: Record<string, string[]> = {
  shipping: [
    "ship",
    "shipment",
    "shipping",
    "deliver",
    "delivery",
    "parcel",
    "package",
    "order",
    "track",
    "tracking",
    "arrive",
    "courier",
    "dispatch",
    "post",
    "postage",
  ],
  returns: ["return", "refund", "exchange", "money", "reimburse", "replacement"],
  hours: ["hour", "open", "opening", "closed", "close", "weekend", "monday", "friday", "available", "reach", "call"],
  payment: ["pay", "payment", "card", "invoice", "price", "cost", "charge", "bill"],
  account: ["account", "password", "login", "log", "sign", "email", "e-mail"],
};
const TOPIC_OF = new Map(Object.entries(TOPICS).flatMap(([topic, ws]) => ws.map((w) => [stem(w), topic] as const)));

/** A crude English stem: enough to make "ships", "shipped", "shipping" and "ship" one word. */
function stem(w: string): string {
  let s = w;
  if (s.length > 4 && s.endsWith("ies")) s = `${s.slice(0, -3)}y`;
  else if (s.length > 4 && s.endsWith("ing")) s = s.slice(0, -3);
  else if (s.length > 3 && s.endsWith("ed")) s = s.slice(0, -2);
  else if (s.length > 3 && s.endsWith("es") && /(ss|sh|ch|x)es$/.test(s)) s = s.slice(0, -2);
  else if (s.length > 3 && s.endsWith("s") && !s.endsWith("ss")) s = s.slice(0, -1);
  // "shipp" (from shipping, shipped) → "ship"
  if (s.length > 3 && s.at(-1) === s.at(-2) && !/[aeiouls]/.test(s.at(-1)!)) s = s.slice(0, -1);
  return s;
}

/** The terms of a text: its stemmed words without stop words, and the topics they name (as "#topic"). */
export function terms(text: string): Set<string> {
  const out = new Set<string>();
  for (const w of text.toLowerCase().split(/[^\p{L}\p{N}]+/u)) {
    if (w.length < 2 || STOP.has(w)) continue;
    const s = stem(w);
    out.add(s);
    const topic = TOPIC_OF.get(s);
    if (topic) out.add(`#${topic}`);
  }
  return out;
}

/** The snippets sharing terms with the question, most shared terms first (ties keep their configured order). */
export function rankSnippets(question: string, knowledge: KnowledgeSnippet[]): KnowledgeSnippet[] {
  const q = terms(question);
  return knowledge
    .map((k, i) => ({ k, i, score: [...terms(`${k.title} ${k.snippet}`)].filter((t) => q.has(t)).length }))
    .filter((x) => x.score > 0)
    .sort((a, b) => b.score - a.score || a.i - b.i)
    .map((x) => x.k);
}
