import { invalidArgument } from "../errors.js";
import { LIMITS } from "../limits.js";
import { optionalContent } from "../validate.js";

/** The languages the frame and the launcher speak; the first is the service's default. */
export const LOCALES = ["en", "de", "fr", "es", "ar"] as const;
export type Locale = (typeof LOCALES)[number];

/** Languages written right to left. */
export const RTL_LOCALES: ReadonlySet<string> = new Set(["ar"]);

/** A well-formed BCP 47 language tag (what a host page or a browser may name): letters and digits in subtags. */
const TAG = /^[a-z]{2,3}(-[a-z0-9]{1,8}){0,4}$/i;

/** Whether `tag` is shaped like a language tag ("de", "pt-BR", "zh-Hant-TW"), whether or not the frame speaks it. */
export function isLanguageTag(tag: string): boolean {
  return tag.length <= 35 && TAG.test(tag);
}

/** The frame's language for a tag ("de-AT" → "de"), or undefined when it speaks none that matches. */
export function localeOf(tag: string | undefined): Locale | undefined {
  if (!tag || !isLanguageTag(tag)) return undefined;
  const primary = tag.split("-")[0]!.toLowerCase();
  return (LOCALES as readonly string[]).includes(primary) ? (primary as Locale) : undefined;
}

/** The browser's languages from an Accept-Language header, best first (q=0 left out; at most 20 read). */
export function acceptedLanguages(header: string | undefined): string[] {
  if (!header) return [];
  return header
    .slice(0, 1000)
    .split(",")
    .slice(0, 20)
    .map((part, i) => {
      const [tag = "", ...params] = part.trim().split(";");
      const q = params.map((p) => /^\s*q=([01](?:\.\d{0,3})?)\s*$/.exec(p)?.[1]).find((v) => v !== undefined);
      return { tag: tag.trim(), q: q === undefined ? 1 : Number(q), i };
    })
    .filter((l) => l.q > 0 && l.tag !== "")
    .sort((a, b) => b.q - a.q || a.i - b.i)
    .map((l) => l.tag);
}

/**
 * The language of a frame: the host page's `locale` option when the frame speaks it, else the first of the browser's
 * languages it speaks, else the chatbot's default language, else English.
 */
export function chooseLocale(asked: string | undefined, browser: string[], chatbotDefault: string): Locale {
  return (
    localeOf(asked) ?? browser.map(localeOf).find((l) => l !== undefined) ?? localeOf(chatbotDefault) ?? LOCALES[0]
  );
}

/** A chatbot's own texts in one language; empty means "not written in this language". */
export interface ChatbotTexts {
  greeting: string;
  awayMessage: string;
  ratingPrompt: string;
}

/** A chatbot's default language as asked for: "" (English) or one of LOCALES. */
export function requireDefaultLocale(field: string, value: string): string {
  if (value === "" || (LOCALES as readonly string[]).includes(value)) return value;
  throw invalidArgument(field, `${JSON.stringify(value)} is not one of ${LOCALES.join(", ")}`);
}

/**
 * Per-language texts as asked for, on top of `current`: each language given replaces its texts; one given with all
 * texts empty is removed; the others stay.
 */
export function requireTexts(
  field: string,
  input: { locale: string; greeting: string; awayMessage: string; ratingPrompt: string }[],
  current: Record<string, ChatbotTexts>,
): Record<string, ChatbotTexts> {
  const out = { ...current };
  const seen = new Set<string>();
  input.forEach((t, n) => {
    const at = `${field}[${n}]`;
    if (!(LOCALES as readonly string[]).includes(t.locale))
      throw invalidArgument(`${at}.locale`, `${JSON.stringify(t.locale)} is not one of ${LOCALES.join(", ")}`);
    if (seen.has(t.locale)) throw invalidArgument(`${at}.locale`, `${t.locale} is given twice`);
    seen.add(t.locale);
    const texts: ChatbotTexts = {
      greeting: optionalContent(`${at}.greeting`, t.greeting.trim(), LIMITS.greeting),
      awayMessage: optionalContent(`${at}.away_message`, t.awayMessage.trim(), LIMITS.awayMessage),
      ratingPrompt: optionalContent(`${at}.rating_prompt`, t.ratingPrompt.trim(), LIMITS.ratingPrompt),
    };
    if (texts.greeting || texts.awayMessage || texts.ratingPrompt) out[t.locale] = texts;
    else delete out[t.locale];
  });
  return out;
}

/**
 * The chatbot's texts for a frame in `locale`: those written in that language, else those of the chatbot's default
 * language (the plain `greeting` among them), else "" (the frame's catalogue then has its own words).
 */
export function textsFor(
  a: { greeting: string; defaultLocale: string; texts: Record<string, ChatbotTexts> },
  locale: string,
): ChatbotTexts {
  const own = a.texts[locale];
  const fallback = a.texts[a.defaultLocale || LOCALES[0]];
  return {
    greeting: own?.greeting || fallback?.greeting || a.greeting,
    awayMessage: own?.awayMessage || fallback?.awayMessage || "",
    ratingPrompt: own?.ratingPrompt || fallback?.ratingPrompt || "",
  };
}
