import { invalidArgument } from "../errors.js";
import { LIMITS } from "../limits.js";
import { optionalContent, optionalText } from "../validate.js";
import { type ChatbotTexts, requireDefaultLocale, requireTexts } from "./languages.js";

/** One opening of the team on a weekday (1 Monday … 7 Sunday), local times "HH:MM", open before close. */
export interface OfficeInterval {
  weekday: number;
  open: string;
  close: string;
}

/** When the chatbot's team answers, in its own time zone (IANA, e.g. "Europe/Berlin"). */
export interface OfficeHours {
  timeZone: string;
  intervals: OfficeInterval[];
}

export type Theme = "auto" | "light" | "dark";

/** How a chatbot's frame looks and when its team is in; empty strings mean the service's default. */
export interface ChatbotAppearance {
  /** "#rrggbb": the header, the customer's messages, the send button. */
  brandColor: string;
  /** The frame's first line while the conversation is empty. */
  greeting: string;
  /** The agent's name in the frame, instead of the chatbot's. */
  agentName: string;
  /** "auto" follows the visitor's light or dark preference. */
  theme: Theme;
  /** None: the team is always in. */
  officeHours: OfficeHours | undefined;
  /** The frame's language when neither the host page nor the browser names one it speaks; "" is English. */
  defaultLocale: string;
  /** The greeting, away message and rating prompt written per language (keys: the frame's languages). */
  texts: Record<string, ChatbotTexts>;
}

export const DEFAULT_APPEARANCE: ChatbotAppearance = {
  brandColor: "",
  greeting: "",
  agentName: "",
  theme: "auto",
  officeHours: undefined,
  defaultLocale: "",
  texts: {},
};

/** What an update may change; undefined leaves a part as it is. */
export interface AppearanceInput {
  brandColor?: string;
  greeting?: string;
  agentName?: string;
  theme?: string;
  /** null removes the office hours (the team is always in). */
  officeHours?: { timeZone: string; intervals: OfficeInterval[] } | null;
  defaultLocale?: string;
  /** The languages given replace their texts (all empty: removed); the others stay. */
  texts?: { locale: string; greeting: string; awayMessage: string; ratingPrompt: string }[];
}

const HEX = /^#[0-9a-f]{6}$/;
const HHMM = /^([01]\d|2[0-3]):([0-5]\d)$/;
const MAX_INTERVALS = 7 * 4;

/** Checks and normalises an appearance change on top of `current`. */
export function requireAppearance(
  field: string,
  input: AppearanceInput,
  current: ChatbotAppearance,
): ChatbotAppearance {
  const out = { ...current };
  if (input.brandColor !== undefined) {
    const c = input.brandColor.trim().toLowerCase();
    if (c !== "" && !HEX.test(c))
      throw invalidArgument(`${field}.brand_color`, `${JSON.stringify(input.brandColor)} is not a color like #1f4fd1`);
    out.brandColor = c;
  }
  if (input.greeting !== undefined)
    out.greeting = optionalContent(`${field}.greeting`, input.greeting.trim(), LIMITS.appearanceGreeting);
  if (input.agentName !== undefined) out.agentName = optionalText(`${field}.agent_name`, input.agentName.trim(), 80);
  if (input.theme !== undefined) {
    const t = input.theme === "" ? "auto" : input.theme;
    if (t !== "auto" && t !== "light" && t !== "dark")
      throw invalidArgument(`${field}.theme`, `${JSON.stringify(input.theme)} is not one of auto, light, dark`);
    out.theme = t;
  }
  if (input.officeHours !== undefined)
    out.officeHours =
      input.officeHours === null ? undefined : requireOfficeHours(`${field}.office_hours`, input.officeHours);
  if (input.defaultLocale !== undefined)
    out.defaultLocale = requireDefaultLocale(`${field}.default_locale`, input.defaultLocale);
  if (input.texts !== undefined && input.texts.length > 0)
    out.texts = requireTexts(`${field}.texts`, input.texts, current.texts);
  return out;
}

function requireOfficeHours(field: string, h: { timeZone: string; intervals: OfficeInterval[] }): OfficeHours {
  try {
    new Intl.DateTimeFormat("en", { timeZone: h.timeZone });
  } catch {
    throw invalidArgument(`${field}.time_zone`, `${JSON.stringify(h.timeZone)} is not a time zone like Europe/Berlin`);
  }
  if (h.intervals.length === 0)
    throw invalidArgument(`${field}.intervals`, "at least one is required (leave the office hours out for always in)");
  if (h.intervals.length > MAX_INTERVALS) throw invalidArgument(`${field}.intervals`, `at most ${MAX_INTERVALS}`);
  const intervals = h.intervals.map((i, n) => {
    const at = `${field}.intervals[${n}]`;
    if (!Number.isInteger(i.weekday) || i.weekday < 1 || i.weekday > 7)
      throw invalidArgument(`${at}.weekday`, "must be 1 (Monday) to 7 (Sunday)");
    for (const k of ["open", "close"] as const)
      if (!HHMM.test(i[k])) throw invalidArgument(`${at}.${k}`, `${JSON.stringify(i[k])} is not a time like 09:00`);
    if (i.open >= i.close) throw invalidArgument(at, `opens at ${i.open}, which is not before ${i.close}`);
    return { weekday: i.weekday, open: i.open, close: i.close };
  });
  intervals.sort((a, b) => a.weekday - b.weekday || a.open.localeCompare(b.open));
  return { timeZone: h.timeZone, intervals };
}

/** Whether the team is in at `now`, and if not, when it is next (ms since the epoch; undefined: never). */
export function officeState(h: OfficeHours | undefined, now: number): { open: boolean; nextOpen: number | undefined } {
  if (!h) return { open: true, nextOpen: undefined };
  const local = localTime(h.timeZone, now);
  const minute = local.hour * 60 + local.minute;
  const open = h.intervals.some(
    (i) => i.weekday === local.weekday && minutes(i.open) <= minute && minute < minutes(i.close),
  );
  if (open) return { open, nextOpen: undefined };
  // The first opening after now, looking a week and a day ahead (every weekday comes round).
  for (let day = 0; day <= 7; day++) {
    const weekday = ((local.weekday - 1 + day) % 7) + 1;
    const starts = h.intervals
      .filter((i) => i.weekday === weekday && (day > 0 || minutes(i.open) > minute))
      .map((i) => minutes(i.open));
    if (starts.length === 0) continue;
    const date = new Date(Date.UTC(local.year, local.month - 1, local.day + day));
    return { open, nextOpen: zonedInstant(h.timeZone, date, Math.min(...starts)) };
  }
  return { open, nextOpen: undefined };
}

const minutes = (hhmm: string) => Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3, 5));

const formats = new Map<string, Intl.DateTimeFormat>();
const WEEKDAYS: Record<string, number> = { Mon: 1, Tue: 2, Wed: 3, Thu: 4, Fri: 5, Sat: 6, Sun: 7 };

/** The wall-clock time in a zone. Intl carries the zone database, so no library is needed for this one conversion. */
function localTime(timeZone: string, at: number) {
  let f = formats.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat("en-US", {
      timeZone,
      hourCycle: "h23",
      weekday: "short",
      year: "numeric",
      month: "numeric",
      day: "numeric",
      hour: "numeric",
      minute: "numeric",
    });
    formats.set(timeZone, f);
  }
  const p = Object.fromEntries(f.formatToParts(at).map((x) => [x.type, x.value]));
  return {
    weekday: WEEKDAYS[p.weekday!]!,
    year: Number(p.year),
    month: Number(p.month),
    day: Number(p.day),
    hour: Number(p.hour),
    minute: Number(p.minute),
  };
}

/** The instant at which the zone's clock shows `date` (its UTC calendar day) at `minute` past midnight. */
function zonedInstant(timeZone: string, date: Date, minute: number): number {
  const wall = date.getTime() + minute * 60_000;
  // The zone's offset at the guess, then once more at the corrected instant (a DST change between the two).
  let guess = wall;
  for (let i = 0; i < 2; i++) {
    const l = localTime(timeZone, guess);
    const shown = Date.UTC(l.year, l.month - 1, l.day, l.hour, l.minute);
    guess += wall - shown;
  }
  return guess;
}

/** WCAG 2 relative luminance of "#rrggbb". */
function luminance(hex: string): number {
  const [r, g, b] = [1, 3, 5].map((i) => {
    const c = Number.parseInt(hex.slice(i, i + 2), 16) / 255;
    return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * r! + 0.7152 * g! + 0.0722 * b!;
}

/** WCAG 2 contrast ratio of two "#rrggbb" colors (1 to 21). */
export function contrastRatio(a: string, b: string): number {
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return (hi! + 0.05) / (lo! + 0.05);
}

/** The text color on a brand color: black or white, whichever contrasts more (at least 4.58:1 for any color). */
export function textOn(brand: string): string {
  return contrastRatio(brand, "#000000") >= contrastRatio(brand, "#ffffff") ? "#000000" : "#ffffff";
}
