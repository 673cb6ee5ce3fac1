import type { Locale } from "../../domain/account/languages.js";
import { ar } from "./ar.js";
import { de } from "./de.js";
import { en } from "./en.js";
import { es } from "./es.js";
import { fr } from "./fr.js";

/** Words of the frame's page, written by the server into its HTML ({name}: the agent's name). */
export interface PageStrings {
  title: string;
  aiAssistant: string;
  conversationWith: string;
  messageTo: string;
  placeholder: string;
  send: string;
  needsJs: string;
  askToStart: string;
  notFoundTitle: string;
  notFoundText: string;
  expiredLinkTitle: string;
  expiredLinkText: string;
  cannotStartTitle: string;
  otherChatbot: string;
  badHostOrigin: string;
  badLocale: string;
  unavailableTitle: string;
  unavailableText: string;
}

/**
 * Words of the frame's script, sent in the page as JSON for the one language in use ({…}: filled in by the script).
 * Keep the keys short: they travel with every frame page.
 */
export interface ScriptStrings {
  expiredReconnect: string;
  expiredReload: string;
  reconnect: string;
  offline: string;
  unreachable: string;
  tryAgain: string;
  /** The composer's label once the answerer changes (the page's own label says the same at first). */
  messageTo: string;
  invalidSession: string;
  stillNoSession: string;
  needsToken: string;
  offlineLoad: string;
  onlyInside: string;
  unreachableReload: string;
  linkUsed: string;
  connectionLost: string;
  youSaid: string;
  assistantSaid: string;
  operatorSaid: string;
  said: string;
  assistantTyping: string;
  /** Shown while the agent runs a tool call (never what it sends or gets back). */
  lookingUp: string;
  error: string;
  sources: string;
  /** The attach button's label (attach.ts). */
  attach: string;
  aiAssistant: string;
  teamOf: string;
  joined: string;
  left: string;
  closed: string;
  reopened: string;
  willReply: string;
  personWillReply: string;
  aPerson: string;
  supportTeam: string;
  typing: string;
  ratingPrompt: string;
  r1: string;
  r2: string;
  r3: string;
  r4: string;
  r5: string;
  commentPlaceholder: string;
  commentLabel: string;
  sendRating: string;
  thanks: string;
  awayUntil: string;
  away: string;
  awayHelp: string;
  backAt: string;
  /** The e-mail prompt (browser/mail-prompt.ts): asking for the address when nobody is online, and transcripts. */
  mAsk: string;
  mLabel: string;
  mSave: string;
  mSaved: string;
  mSend: string;
  mSent: string;
  mBad: string;
  mFail: string;
}

export interface Catalogue {
  page: PageStrings;
  script: ScriptStrings;
}

export const CATALOGUES: Record<Locale, Catalogue> = { en, de, fr, es, ar };

/** Fills `{key}` in a catalogue's text. */
export function fill(text: string, values: Record<string, string>): string {
  return text.replace(/\{(\w+)\}/g, (m, k: string) => values[k] ?? m);
}
