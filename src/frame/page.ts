import { type ChatbotAppearance, textOn } from "../domain/account/appearance.js";
import { type Locale, RTL_LOCALES, textsFor } from "../domain/account/languages.js";
import { LIMITS } from "../domain/limits.js";
import { isoTime } from "../domain/time.js";
import { CATALOGUES, fill, type ScriptStrings } from "./i18n/catalogue.js";

/** Where the frame's script and stylesheet are served. */
export const ASSET_PATH = "/chatbot-iframe/assets/";

/** Escapes text for HTML text and double-quoted attribute values. */
export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** What the frame page needs to know; none of it is secret (the token is read from the address by the script). */
export interface FramePageSettings {
  chatbotName: string;
  /** Prefix for API calls; "" when the API is on the frame's own origin. */
  apiBase: string;
  /** The embedding page's origin, when known: the only target of [TOKEN_REFRESH]. */
  hostOrigin: string | undefined;
  allowedOrigins: string[];
  refreshTimeoutMs: number;
  /** The chatbot's look (color, greeting, agent name, theme) and office hours. */
  appearance: ChatbotAppearance;
  /** Whether its team is in now, and if not when it is back. */
  office: { open: boolean; nextOpen: number | undefined };
  /** The agent's picture, a path of this service ("" when none): the script shows it with the agent's name. */
  agentPicture: string;
  /** The frame's language (chooseLocale: the host's option, the browser's languages, the chatbot's default). */
  locale: Locale;
}

/** `lang` and `dir` of a page in `locale`. */
function langAttributes(locale: Locale): string {
  return `lang="${locale}" dir="${RTL_LOCALES.has(locale) ? "rtl" : "ltr"}"`;
}

/** JSON inside a <script type="application/json"> element: nothing in it can close the element. */
function jsonInHtml(value: unknown): string {
  return JSON.stringify(value).replace(/</g, "\\u003c");
}

/**
 * The script's words for the one language in use, with the chatbot's own away message and rating prompt in place of
 * the catalogue's when it wrote them (in that language, or in its default one).
 */
export function scriptStrings(s: Pick<FramePageSettings, "appearance" | "locale">): ScriptStrings {
  const t = CATALOGUES[s.locale].script;
  const own = textsFor(s.appearance, s.locale);
  return {
    ...t,
    ...(own.ratingPrompt ? { ratingPrompt: own.ratingPrompt } : {}),
    ...(own.awayMessage ? { away: own.awayMessage, awayUntil: `${own.awayMessage} ${t.backAt}`, awayHelp: "" } : {}),
  };
}

const SEND_ICON = `<svg width="20" height="20" viewBox="0 0 24 24" aria-hidden="true" focusable="false"><path fill="currentColor" d="M3.4 20.4 21.85 12.5a.55.55 0 0 0 0-1L3.4 3.6a.55.55 0 0 0-.76.63L4.6 11 14 12l-9.4 1-1.96 6.77a.55.55 0 0 0 .76.63z"/></svg>`;

/** The chat frame's HTML: the chat's skeleton, filled in by /chatbot-iframe/assets/frame.js (a module: it loads
 * its other chunks from the same path when they are first needed). */
export function framePage(s: FramePageSettings): string {
  const a = s.appearance;
  const agent = a.agentName || s.chatbotName;
  const name = escapeHtml(agent);
  const initial = escapeHtml([...agent.trim()][0]?.toUpperCase() ?? "?");
  // The brand color is applied by the script (the CSP allows no inline style); the text color on it is chosen here.
  const brand = a.brandColor ? ` data-brand-color="${a.brandColor}" data-brand-text="${textOn(a.brandColor)}"` : "";
  const back = s.office.nextOpen === undefined ? "" : isoTime(s.office.nextOpen);
  const away =
    s.office.open || !a.officeHours
      ? ""
      : ` data-away-until="${back}" data-time-zone="${escapeHtml(a.officeHours.timeZone)}"`;
  const w = CATALOGUES[s.locale].page;
  const greeting = textsFor(a, s.locale).greeting;
  const empty = greeting ? escapeHtml(greeting) : fill(w.askToStart, { name });
  return `<!doctype html>
<html ${langAttributes(s.locale)}${a.theme === "auto" ? "" : ` data-theme="${a.theme}"`}>
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${fill(w.title, { name })}</title>
<link rel="stylesheet" href="${ASSET_PATH}frame.css">
<script type="application/json" id="strings">${jsonInHtml(scriptStrings(s))}</script>
<script type="module" src="${ASSET_PATH}frame.js"></script>
</head>
<body>
<main id="chat" class="chat" data-chatbot-name="${escapeHtml(s.chatbotName)}" data-agent-name="${name}"${s.agentPicture ? ` data-agent-picture="${escapeHtml(s.agentPicture)}"` : ""}${brand}${away} data-api-base="${escapeHtml(s.apiBase)}" data-host-origin="${escapeHtml(s.hostOrigin ?? "")}" data-allowed-origins="${escapeHtml(s.allowedOrigins.join(" "))}" data-refresh-timeout-ms="${s.refreshTimeoutMs}">
<header class="chat__header">
<div id="avatar" class="chat__avatar" aria-hidden="true">${initial}</div>
<div><h1 id="title" class="chat__title">${name}</h1><p id="subtitle" class="chat__subtitle">${w.aiAssistant}</p></div>
</header>
<p id="away" class="away" role="note" hidden></p>
<div id="notice" class="notice" role="status" aria-live="polite" hidden><span id="notice-text"></span><button id="notice-action" type="button" hidden></button></div>
<p id="empty" class="empty">${empty}</p>
<ol id="log" class="log" aria-live="polite" aria-label="${fill(w.conversationWith, { name })}" tabindex="0"></ol>
<p id="typing" class="typing" role="status" hidden></p>
<form id="composer" class="composer">
<label for="input" class="sr-only">${fill(w.messageTo, { name })}</label>
<textarea id="input" name="content" rows="1" maxlength="${LIMITS.message}" placeholder="${w.placeholder}" autocomplete="off" enterkeyhint="send"></textarea>
<button id="send" type="submit" disabled aria-label="${w.send}">${SEND_ICON}</button>
</form>
<noscript><p class="empty">${w.needsJs}</p></noscript>
</main>
</body>
</html>
`;
}

/** A small page for a frame that cannot be shown (unknown chatbot, bad parameters), in the frame's language. */
export function errorPage(title: string, text: string, locale: Locale = "en"): string {
  return `<!doctype html>
<html ${langAttributes(locale)}>
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<link rel="stylesheet" href="${ASSET_PATH}frame.css">
</head>
<body>
<main class="page-error"><h1>${escapeHtml(title)}</h1><p>${escapeHtml(text)}</p></main>
</body>
</html>
`;
}
