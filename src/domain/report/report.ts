import type { ChatbotRepository } from "../account/repository.js";
import type { AccountCaller } from "../caller.js";
import type { Clock } from "../clock.js";
import { invalidArgument, notFound } from "../errors.js";
import { requireUuid } from "../ids.js";
import type { Report, ReportDuration } from "./csv.js";
import type { OperatorReportFacts } from "./operator-facts.js";

export type { Report, ReportDuration } from "./csv.js";

/** Conversations started in one quarter hour of the period (floor(ms / 900000) of their start). */
export interface ReportStarts {
  quarter: number;
  conversations: number;
  /** Those a person of the team wrote in (an operator message). */
  handedOver: number;
}

/** How many conversations took each whole number of seconds (a histogram: percentiles follow exactly). */
export interface ReportSeconds {
  seconds: number;
  count: number;
}

/** What the report counts in storage for one chatbot's conversations started in a period. */
export interface ReportCounts {
  /** Conversations per quarter hour of their start; a quarter may come in more than one row, to be added up. */
  starts: ReportStarts[];
  /** The rated: how many got each score. */
  ratings: { score: number; count: number }[];
  /** Of those handed over, the seconds from the first customer message to the first operator message. */
  firstResponses: ReportSeconds[];
  /**
   * Of those closed (stored closed, or live with no activity since idleBefore: rules.ts effectiveStatus), the
   * seconds from the start to the last activity (the last message, or the closing of one with none).
   */
  timesToClose: ReportSeconds[];
  /** Their messages, per quarter hour of the message's instant. */
  messageQuarters: { quarter: number; messages: number }[];
  /** Of those whose first-response SLA clock ran: answered by the due instant (hits), and breached. */
  sla: { hits: number; breaches: number };
}

/**
 * What the report reads from storage, all counted there from facts the writes keep on each conversation and
 * message (so a year of a million conversations is a few index ranges, not a million rows); the figures are
 * computed from these counts here, the same for both back ends. Every time zone's offset is whole quarter hours
 * (since 1972), so counts per quarter hour give local days and hours.
 */
export interface ReportRepository {
  /** The counts of the chatbot's conversations started in [from, to). */
  counts(chatbotId: string, from: number, to: number, idleBefore: number): Promise<ReportCounts>;
  /** The operator report's facts of the account's conversations that came to someone in [from, to). */
  operatorFacts(accountId: string, from: number, to: number): Promise<OperatorReportFacts>;
}

export interface ReportQuery {
  chatbotId: string;
  from: string;
  to: string;
  timeZone?: string | undefined;
}

/** The longest period a report covers, in days: a year, leap day included. */
export const MAX_REPORT_DAYS = 366;
const QUARTER = 900_000;
const DAY = 86_400_000;

/** The nearest-rank percentile p (0..1] of a histogram: the value whose running count first reaches ceil(p n). */
function histogramRank(ascending: readonly ReportSeconds[], n: number, p: number): number {
  const k = Math.max(1, Math.ceil(p * n));
  let seen = 0;
  for (const h of ascending) {
    seen += h.count;
    if (seen >= k) return h.seconds;
  }
  return 0;
}

export function duration(histogram: readonly ReportSeconds[]): ReportDuration {
  const h = [...histogram].sort((a, b) => a.seconds - b.seconds);
  const n = h.reduce((sum, x) => sum + x.count, 0);
  if (n === 0) return { count: 0, medianSeconds: 0, p90Seconds: 0 };
  return { count: n, medianSeconds: histogramRank(h, n, 0.5), p90Seconds: histogramRank(h, n, 0.9) };
}

export function parseDay(field: string, v: string): number {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(v);
  const t = m ? Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])) : Number.NaN;
  // Date.UTC rolls 2026-02-30 over to March: the round trip refuses it.
  if (!m || Number.isNaN(t) || new Date(t).toISOString().slice(0, 10) !== v)
    throw invalidArgument(field, "must be a date, YYYY-MM-DD");
  return t;
}

export function zoneFormat(timeZone: string): Intl.DateTimeFormat {
  try {
    return new Intl.DateTimeFormat("en-CA", {
      timeZone,
      hourCycle: "h23",
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      hour: "2-digit",
      minute: "2-digit",
    });
  } catch {
    throw invalidArgument("time_zone", "must be an IANA time zone, e.g. Europe/Paris");
  }
}

/** The local wall clock of an instant in a zone, as if it were UTC (ms), for offsets and local dates and hours. */
function wallClock(f: Intl.DateTimeFormat, t: number): number {
  const p = Object.fromEntries(f.formatToParts(t).map((x) => [x.type, x.value]));
  return Date.UTC(Number(p.year), Number(p.month) - 1, Number(p.day), Number(p.hour), Number(p.minute));
}

/** The instant a local day starts in the zone (its first existing minute, when a change skips midnight). */
export function localMidnight(f: Intl.DateTimeFormat, day: number): number {
  let t = day - (wallClock(f, day) - day);
  // The offset at the guess may differ from the offset at the answer (a change that day): settle it.
  for (let i = 0; i < 3; i++) t = day - (wallClock(f, t) - t);
  while (wallClock(f, t) < day) t += QUARTER;
  return t;
}

/** A chatbot's figures over a period of whole local days, from the stored conversations, messages and ratings. */
export class Reports {
  constructor(
    private readonly d: {
      chatbots: ChatbotRepository;
      reports: ReportRepository;
      clock: Clock;
      idleCloseSeconds: number;
    },
  ) {}

  async get(caller: AccountCaller, q: ReportQuery): Promise<Report> {
    const chatbotId = requireUuid("chatbot_id", q.chatbotId);
    const fromDay = parseDay("from", q.from);
    const toDay = parseDay("to", q.to);
    if (toDay < fromDay) throw invalidArgument("to", "must be on or after from");
    const dayCount = (toDay - fromDay) / DAY + 1;
    if (dayCount > MAX_REPORT_DAYS) throw invalidArgument("to", `the period is at most ${MAX_REPORT_DAYS} days`);
    const timeZone = q.timeZone || "UTC";
    const f = zoneFormat(timeZone);
    const bot = await this.d.chatbots.byId(chatbotId);
    if (!bot || bot.accountId !== caller.accountId) throw notFound("chatbot");

    const start = localMidnight(f, fromDay);
    const end = localMidnight(f, toDay + DAY);
    const idleBefore = this.d.clock.now() - this.d.idleCloseSeconds * 1000;
    const { starts, ratings, firstResponses, timesToClose, messageQuarters, sla } = await this.d.reports.counts(
      chatbotId,
      start,
      end,
      idleBefore,
    );

    const days = Array.from({ length: dayCount }, (_, i) => ({
      date: new Date(fromDay + i * DAY).toISOString().slice(0, 10),
      conversations: 0,
      handedOver: 0,
    }));
    const distribution = [0, 0, 0, 0, 0];
    let conversations = 0;
    let handedOver = 0;
    // Local days of the period start at their local midnights (whole quarter hours): one boundary search per
    // quarter hour of starts, no formatting.
    const bounds = days.map((_, i) => localMidnight(f, fromDay + i * DAY));
    for (const r of starts) {
      const day = days[dayIndex(bounds, r.quarter * QUARTER)]!;
      day.conversations += r.conversations;
      day.handedOver += r.handedOver;
      conversations += r.conversations;
      handedOver += r.handedOver;
    }
    for (const r of ratings) distribution[r.score - 1]! += r.count;
    const scoreSum = distribution.reduce((sum, n, i) => sum + n * (i + 1), 0);
    const rated = distribution.reduce((a, b) => a + b, 0);
    const hours = Array.from({ length: 24 }, (_, hour) => ({ hour, messages: 0 }));
    // A zone's offset changes at most a few times a year: one at each day's start and end, and per quarter only
    // on a day where they differ (a change of the clocks), rather than a formatting per quarter hour.
    const offsets = [...bounds, end].map((t) => wallClock(f, t) - t);
    for (const q of messageQuarters) {
      const t = q.quarter * QUARTER;
      const i = dayIndex(bounds, t);
      // A message after the period's end (its conversation started on the last day) is formatted on its own.
      const offset = t < end && offsets[i] === offsets[i + 1] ? offsets[i]! : wallClock(f, t) - t;
      hours[new Date(t + offset).getUTCHours()]!.messages += q.messages;
    }
    return {
      chatbotId,
      from: q.from,
      to: q.to,
      timeZone,
      conversations,
      handedOver,
      handedOverShare: conversations === 0 ? 0 : handedOver / conversations,
      days,
      firstResponse: duration(firstResponses),
      timeToClose: duration(timesToClose),
      ratings: { count: rated, average: rated === 0 ? 0 : scoreSum / rated, distribution },
      hours,
      sla,
    };
  }
}

/** The index of the last boundary at or before t (t is within the period). */
function dayIndex(bounds: readonly number[], t: number): number {
  let lo = 0;
  let hi = bounds.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (bounds[mid]! <= t) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}
