import type { ChatbotRecord, KnowledgeSnippet } from "../account/repository.js";
import type { KnowledgeView, ReplySources } from "../knowledge/knowledge-service.js";
import { detectLocale, type Locale } from "../knowledge/language.js";
import { scoreSnippets } from "../knowledge/matching.js";
import type { Passage } from "../knowledge/scoring.js";
import {
  type Agent,
  type AgentContext,
  type AgentEvent,
  type AgentTurn,
  agentNameOf,
  type CitedDocument,
  type ReplyScope,
} from "./agent.js";

export type { CitedDocument };

/** The sentences the built-in agent writes itself, in the customer's language. */
const SAY: Record<
  Locale,
  { hello: (name: string) => string; topics: (list: string) => string; unknown: string; noKnowledge: string }
> = {
  en: {
    hello: (name) => `Hello! I'm ${name}. How can I help?`,
    topics: (list) => `I can answer questions about ${list}.`,
    unknown: "I'm sorry, I don't know the answer to that. A member of our team can follow up here.",
    noKnowledge:
      "I have no knowledge to answer from yet, so a member of our team will follow up here. " +
      "(For the chatbot's owner: give it knowledge with the aiagent command's --knowledge option, " +
      'a JSON file listing {"title", "url", "snippet"} entries, or add a knowledge source: docs/knowledge.md.)',
  },
  de: {
    hello: (name) => `Hallo! Ich bin ${name}. Wie kann ich helfen?`,
    topics: (list) => `Ich beantworte Fragen zu ${list}.`,
    unknown: "Das weiß ich leider nicht. Eine Person aus unserem Team kann sich hier darum kümmern.",
    noKnowledge:
      "Ich habe noch kein Wissen, aus dem ich antworten kann; eine Person aus unserem Team meldet sich hier.",
  },
  fr: {
    hello: (name) => `Bonjour ! Je suis ${name}. Comment puis-je vous aider ?`,
    topics: (list) => `Je peux répondre aux questions sur ${list}.`,
    unknown: "Désolé, je ne connais pas la réponse. Un membre de notre équipe peut vous répondre ici.",
    noKnowledge: "Je n'ai encore aucune connaissance pour répondre ; un membre de notre équipe vous répondra ici.",
  },
  es: {
    hello: (name) => `¡Hola! Soy ${name}. ¿En qué puedo ayudarte?`,
    topics: (list) => `Puedo responder preguntas sobre ${list}.`,
    unknown: "Lo siento, no sé la respuesta. Una persona de nuestro equipo puede ayudarte aquí.",
    noKnowledge: "Todavía no tengo conocimientos para responder; una persona de nuestro equipo te responderá aquí.",
  },
};
const AND: Record<Locale, string> = { en: "and", de: "und", fr: "et", es: "y" };

const GREETING =
  /^\s*(hi|hello|hey|hallo|guten (morgen|tag|abend)|servus|moin|bonjour|bonsoir|salut|hola|buen[oa]s (d[ií]as|tardes|noches)|good (morning|afternoon|evening))\b[\s!.,¡]*$/i;

function localeOfGreeting(q: string): Locale {
  if (/hallo|guten|servus|moin/i.test(q)) return "de";
  if (/bonjour|bonsoir|salut/i.test(q)) return "fr";
  if (/hola|buen/i.test(q)) return "es";
  return "en";
}

/** The knowledge list's first titles, as written and quoted: “Track your parcel”, “Shipping” and “Returns”. */
function topics(knowledge: KnowledgeSnippet[], locale: Locale): string {
  const titles = knowledge.slice(0, 4).map((k) => `“${k.title}”`);
  return titles.length > 1 ? `${titles.slice(0, -1).join(", ")} ${AND[locale]} ${titles.at(-1)}` : (titles[0] ?? "");
}

/** A passage as a cited document: the documented fields, and its provenance beside them. */
export function citation(p: Passage): CitedDocument {
  return {
    title: p.title,
    url: p.anchorUrl,
    snippet: p.text,
    sourceId: p.sourceId,
    sourceTitle: p.sourceTitle,
    anchorUrl: p.anchorUrl,
    headingPath: p.headingPath,
    excerpt: p.excerpt,
    score: Math.round(p.score * 1000) / 1000,
    knowledgeVersion: p.knowledgeVersion,
  };
}

/**
 * What the built-in agent says: the best passage (cited), a greeting, or plainly that it does not know; its own
 * sentences in the customer's language (English, German, French or Spanish, from the question). `passages` are the
 * ones that scored above the threshold, best first.
 */
export function composeAnswer(
  chatbot: Pick<ChatbotRecord, "name" | "knowledge" | "appearance">,
  question: string,
  passages: Passage[],
  hasKnowledge: boolean,
): { content: string; documents: CitedDocument[] } {
  const greeting = GREETING.test(question);
  const locale = greeting ? localeOfGreeting(question) : detectLocale(question);
  const say = SAY[locale];
  // The appearance's agent name ("Ava") when it has one, else the chatbot's.
  const name = agentNameOf(chatbot);
  if (!hasKnowledge)
    return { content: greeting ? `${say.hello(name)} ${say.noKnowledge}` : say.noKnowledge, documents: [] };
  const [best] = passages;
  // The source travels as a cited document (the frame shows it as a link), not repeated in the text.
  if (best && !greeting) return { content: best.text, documents: [citation(best)] };
  const known = topics(chatbot.knowledge, locale);
  if (greeting)
    return {
      content: known ? `${say.hello(name)} ${say.topics(known)}` : say.hello(name),
      documents: [],
    };
  return { content: say.unknown, documents: [] };
}

/** The built-in agent's answer from the chatbot's own knowledge list alone (no indexed sources). */
export function offlineAnswer(
  chatbot: ChatbotRecord,
  question: string,
): { content: string; documents: CitedDocument[] } {
  return composeAnswer(chatbot, question, scoreSnippets(question, chatbot.knowledge), chatbot.knowledge.length > 0);
}

/**
 * Finds a chatbot's passages for a question (KnowledgeService.searchKnowledge), best first, above the threshold;
 * with a view, in a draft's knowledge sources instead of the live ones; with `sources`, in those listed there (as the
 * reply read them) rather than reading them again.
 */
export type SearchPassages = (
  chatbot: ChatbotRecord,
  question: string,
  limit: number,
  view?: KnowledgeView,
  sources?: ReplySources,
) => Promise<Passage[]>;

/**
 * The built-in agent: deterministic, offline; answers from the chatbot's knowledge sources and list (the passage
 * that best matches the question, cited with its provenance), or says it does not know.
 */
export class OfflineAgent implements Agent {
  constructor(
    private readonly search?: SearchPassages,
    /**
     * The chatbot's indexed sources (KnowledgeService.sourcesFor), read when the reply's context does not bring them:
     * a chatbot without a list still answers from its sources.
     */
    private readonly sourcesFor?: (chatbotId: string, view?: KnowledgeView) => Promise<ReplySources>,
  ) {}

  async *reply(
    chatbot: ChatbotRecord,
    history: AgentTurn[],
    signal: AbortSignal,
    scope?: ReplyScope,
    context?: AgentContext,
  ): AsyncIterable<AgentEvent> {
    const question = [...history].reverse().find((t) => t.role === "user")?.content ?? "";
    // A replay's draft side searches the draft's knowledge sources.
    const view = scope?.replay?.knowledge;
    let answer: { content: string; documents: CitedDocument[] };
    if (this.search) {
      // The director read the sources at the reply's start: the search and "has it any?" take them from there.
      const sources = context?.sources ?? (await this.sourcesFor?.(chatbot.chatbotId, view));
      const passages = await this.search(chatbot, question, 3, view, sources);
      const has = chatbot.knowledge.length > 0 || passages.length > 0 || !!sources?.any;
      answer = composeAnswer(chatbot, question, passages, has);
    } else answer = offlineAnswer(chatbot, question);
    const { content, documents } = answer;
    for (const piece of content.match(/\S+\s*/g) ?? []) {
      if (signal.aborted) return;
      yield { type: "delta", text: piece };
    }
    yield { type: "done", content, documents, toolCalls: "" };
  }
}
