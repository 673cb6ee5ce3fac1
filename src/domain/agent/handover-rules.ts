import { officeState } from "../account/appearance.js";
import type { ChatbotRecord } from "../account/repository.js";
import type { AgentTurn } from "./agent.js";

// The handover rules that need no model: a customer asking for a person (English, German, French, Spanish), the
// client's own words, and answers in a row that were "I don't know".

/** A language the built-in handover phrases and messages know. */
export type HandoverLanguage = "en" | "de" | "fr" | "es";

const PERSON_REQUESTS: Record<HandoverLanguage, RegExp[]> = {
  en: [
    /\b(talk|speak|chat|write)\s+(to|with)\s+(a|an|some|the|your)?\s*(real\s+|live\s+)?(human|person|people|agent|somebody|someone|representative|operator|staff|team member|support team)\b/i,
    /\b(i\s+(want|need|would like|'d like)|can i (get|have)|give me|connect me (to|with))\s+(a|an|to)?\s*(real\s+|live\s+)?(human|person|agent|representative|operator)\b/i,
    /\b(real|live)\s+(human|person|agent)\b/i,
    /^\s*(human|person|agent|operator)( please)?[\s!.?]*$/i,
  ],
  de: [
    /\b(mit\s+)?(einem|einer)\s+(echten\s+)?(menschen|mitarbeiter(in)?|person|berater(in)?|kundenberater(in)?)\s+(sprechen|reden|schreiben)\b/i,
    /\b(echten?|richtigen?)\s+(menschen|mitarbeiter|person)\b/i,
    /\bich\s+(will|möchte|moechte|brauche)\s+(einen|eine|mit einem|mit einer)\s+(menschen|mitarbeiter(in)?|person)\b/i,
  ],
  fr: [
    /\b(parler|discuter|échanger)\s+(à|a|avec)\s+(un|une|quelqu'un|quelqu’un)\s*(vrai(e)?\s+)?(humain|personne|conseiller|conseillère|agent|opérateur|opératrice)?\b/i,
    /\b(un|une)\s+(vrai(e)?\s+)?(humain|personne réelle|conseiller humain)\b/i,
  ],
  es: [
    /\b(hablar|comunicarme|chatear)\s+con\s+(una?\s+)?(persona|humano|agente|asesor(a)?|representante|alguien)\b/i,
    /\b(persona|agente)\s+(real|humano|humana)\b/i,
  ],
};

/** The languages to try, in order. */
const LANGUAGES: HandoverLanguage[] = ["en", "de", "fr", "es"];

/** What the customer is told when the conversation goes to the team. */
const MESSAGES: Record<HandoverLanguage, { now: string; later: (when: string) => string }> = {
  en: {
    now: "I'm passing you to a person from our team. They will answer here as soon as possible.",
    later: (w) =>
      `I'm passing you to a person from our team. The team is away right now; they will answer here when they are back (${w}).`,
  },
  de: {
    now: "Ich gebe Sie an eine Person aus unserem Team weiter. Sie antwortet hier so bald wie möglich.",
    later: (w) =>
      `Ich gebe Sie an eine Person aus unserem Team weiter. Das Team ist gerade nicht da; es antwortet hier, sobald es zurück ist (${w}).`,
  },
  fr: {
    now: "Je vous passe une personne de notre équipe. Elle vous répondra ici dès que possible.",
    later: (w) =>
      `Je vous passe une personne de notre équipe. L'équipe est absente pour le moment ; elle vous répondra ici à son retour (${w}).`,
  },
  es: {
    now: "Le paso con una persona de nuestro equipo. Le responderá aquí lo antes posible.",
    later: (w) =>
      `Le paso con una persona de nuestro equipo. El equipo no está ahora; le responderá aquí cuando vuelva (${w}).`,
  },
};

const LOCALES: Record<HandoverLanguage, string> = { en: "en-GB", de: "de-DE", fr: "fr-FR", es: "es-ES" };

/** Why a customer's message hands the conversation over, and in which language it asked; undefined: it does not. */
export function handoverRequest(
  text: string,
  phrases: readonly string[],
): { reason: string; language: HandoverLanguage } | undefined {
  for (const language of LANGUAGES)
    if (PERSON_REQUESTS[language].some((r) => r.test(text)))
      return { reason: "the customer asked for a person", language };
  const lower = text.toLowerCase();
  const word = phrases.find((p) => lower.includes(p.toLowerCase()));
  if (word !== undefined) return { reason: `the customer's message contains "${word}"`, language: "en" };
  return undefined;
}

/** What the customer is told: a person will answer, and when, given the team's office hours. */
export function handoverMessage(chatbot: ChatbotRecord, now: number, language: HandoverLanguage = "en"): string {
  const hours = chatbot.appearance.officeHours;
  const { open, nextOpen } = officeState(hours, now);
  const m = MESSAGES[language];
  if (open || nextOpen === undefined || !hours) return m.now;
  const when = new Intl.DateTimeFormat(LOCALES[language], {
    weekday: "long",
    hour: "2-digit",
    minute: "2-digit",
    timeZone: hours.timeZone,
    timeZoneName: "short",
  }).format(nextOpen);
  return m.later(when);
}

const DONT_KNOW = [
  /\bI (don't|do not|can't|cannot) (know|answer|help with)\b/i,
  /\bI (don't|do not) have (an answer|that information|information about|the answer)\b/i,
  /\bI have no knowledge to answer from\b/i,
  /\bI'm not sure\b|\bI am not sure\b/i,
  /\b(the sources|my sources|they) do not cover\b/i,
  // The built-in agent's own "I don't know" in German, French and Spanish (offline-agent.ts), and their like.
  /\b(das )?wei(ß|ss) ich (leider )?nicht\b/i,
  /\bje ne (connais|sais) pas\b/i,
  /\bno s[ée] la respuesta\b|\bno lo s[ée]\b/i,
];

/** True for an answer that says the agent does not know. */
export function isDontKnow(content: string): boolean {
  return DONT_KNOW.some((r) => r.test(content));
}

/** How many of the agent's latest answers in a row (before this turn's) were "I don't know". */
export function dontKnowStreak(history: readonly AgentTurn[]): number {
  let n = 0;
  for (let i = history.length - 1; i >= 0; i--) {
    const t = history[i]!;
    if (t.role === "user") continue;
    if (t.role === "operator" || !isDontKnow(t.content)) break;
    n++;
  }
  return n;
}
