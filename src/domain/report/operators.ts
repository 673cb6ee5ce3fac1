import type { AccountCaller } from "../caller.js";
import { invalidArgument } from "../errors.js";
import type { HoldingLine, OperatorReportFacts, OperatorReportRepository } from "./operator-facts.js";
import type { HeldFigures, OperatorFigures, OperatorReport, TeamFigures } from "./operators-csv.js";
import { duration, localMidnight, MAX_REPORT_DAYS, parseDay, type ReportSeconds, zoneFormat } from "./report.js";

export type { HoldingLine, OperatorReportFacts, OperatorReportRepository } from "./operator-facts.js";
export type { OperatorFigures, OperatorReport, TeamFigures } from "./operators-csv.js";

export interface OperatorReportQuery {
  from: string;
  to: string;
  timeZone?: string | undefined;
}

const DAY = 86_400_000;
const TAKES = new Set(["assigned", "taken_over"]);
const ENDS = new Set(["assigned", "taken_over", "released", "closed"]);

/** One stretch of a conversation held by one person. */
interface Holding {
  conversationId: string;
  email: string;
  start: number;
  /** When it ended (next assignment, release or close), Infinity while held. */
  end: number;
  closedAt: number | undefined;
}

type SlaFact = OperatorReportFacts["sla"][number];

/** What one person or team accumulates. */
class Tally {
  readonly conversations = new Set<string>();
  readonly firstResponses: number[] = [];
  readonly resolutions: number[] = [];
  /** The conversations whose SLA was met or missed in this tally's holdings (a set: a team counts one once). */
  readonly slaHits = new Set<string>();
  readonly slaBreaches = new Set<string>();

  figures(scores: ReadonlyMap<string, number>): HeldFigures {
    const distribution = [0, 0, 0, 0, 0];
    for (const c of this.conversations) {
      const s = scores.get(c);
      if (s !== undefined && s >= 1 && s <= 5) distribution[s - 1]!++;
    }
    const count = distribution.reduce((a, b) => a + b, 0);
    const sum = distribution.reduce((a, n, i) => a + n * (i + 1), 0);
    return {
      conversations: this.conversations.size,
      firstResponse: duration(histogram(this.firstResponses)),
      resolution: duration(histogram(this.resolutions)),
      ratings: { count, average: count === 0 ? 0 : sum / count, distribution },
      csat: count === 0 ? 0 : (distribution[3]! + distribution[4]!) / count,
      sla: { hits: this.slaHits.size, breaches: this.slaBreaches.size },
    };
  }

  add(h: Holding, firstReply: number | undefined, sla: SlaFact | undefined): void {
    this.conversations.add(h.conversationId);
    if (firstReply !== undefined) this.firstResponses.push(Math.floor((firstReply - h.start) / 1000));
    if (h.closedAt !== undefined) this.resolutions.push(Math.floor((h.closedAt - h.start) / 1000));
    if (!sla) return;
    const within = (t: number) => t >= h.start && t < h.end;
    // Met: the first reply came while they held it, by the due instant. Missed: they held it when it fell due.
    if (sla.firstOperatorAt !== null && sla.firstOperatorAt <= sla.dueAt) {
      if (within(sla.firstOperatorAt)) this.slaHits.add(h.conversationId);
    } else if (sla.breached && within(sla.dueAt)) this.slaBreaches.add(h.conversationId);
  }
}

function histogram(values: number[]): ReportSeconds[] {
  const m = new Map<number, number>();
  for (const v of values) m.set(v, (m.get(v) ?? 0) + 1);
  return [...m].map(([seconds, count]) => ({ seconds, count }));
}

/** The stretches in which each person held each conversation, from its timeline lines (ordered per conversation). */
export function holdings(lines: readonly HoldingLine[]): Holding[] {
  const out: Holding[] = [];
  let open: Holding | undefined;
  let conversation = "";
  for (const l of lines) {
    if (l.conversationId !== conversation) {
      open = undefined;
      conversation = l.conversationId;
    }
    if (!ENDS.has(l.kind)) continue;
    // Given again to the one who holds it: the same stretch goes on.
    if (open && TAKES.has(l.kind) && l.toEmail.toLowerCase() === open.email) continue;
    if (open) {
      open.end = l.createdAt;
      if (l.kind === "closed") open.closedAt = l.createdAt;
      open = undefined;
    }
    if (TAKES.has(l.kind) && l.toEmail !== "" && l.toEmail !== "ai_agent") {
      open = {
        conversationId: l.conversationId,
        email: l.toEmail.toLowerCase(),
        start: l.createdAt,
        end: Number.POSITIVE_INFINITY,
        closedAt: undefined,
      };
      out.push(open);
    }
  }
  return out;
}

/**
 * Each operator's and team's figures over a period of whole local days, from the timeline (who held a conversation
 * when), the team's replies and the ratings. A conversation counts for a person when it came to them in the
 * period; their first response is their first reply while they held it; their resolution is its close while they
 * held it; its rating counts for everyone who held it in the period; its first-response SLA is a hit for whoever
 * held it at the first reply (by the due instant), a breach for whoever held it when it fell due unanswered.
 */
export class OperatorReports {
  constructor(private readonly d: { reports: OperatorReportRepository }) {}

  async get(caller: AccountCaller, q: OperatorReportQuery): Promise<OperatorReport> {
    const fromDay = parseDay("from", q.from);
    const toDay = parseDay("to", q.to);
    if (toDay < fromDay) throw invalidArgument("to", "must be on or after from");
    if ((toDay - fromDay) / DAY + 1 > MAX_REPORT_DAYS)
      throw invalidArgument("to", `the period is at most ${MAX_REPORT_DAYS} days`);
    const timeZone = q.timeZone || "UTC";
    const f = zoneFormat(timeZone);
    const start = localMidnight(f, fromDay);
    const end = localMidnight(f, toDay + DAY);
    const facts = await this.d.reports.operatorFacts(caller.accountId, start, end);

    const repliesOf = new Map<string, number[]>();
    for (const r of facts.replies) {
      const list = repliesOf.get(r.conversationId) ?? [];
      list.push(r.createdAt);
      repliesOf.set(r.conversationId, list);
    }
    for (const list of repliesOf.values()) list.sort((a, b) => a - b);
    const scores = new Map(facts.ratings.map((r) => [r.conversationId, r.score]));
    const slas = new Map(facts.sla.map((s) => [s.conversationId, s]));
    const names = new Map<string, string>();
    for (const l of facts.lines) if (TAKES.has(l.kind) && l.toName) names.set(l.toEmail.toLowerCase(), l.toName);

    const people = new Map<string, Tally>();
    const teamsOf = new Map<string, string[]>();
    const teams = new Map<string, { name: string; members: string[]; tally: Tally }>();
    for (const t of facts.teams) {
      const team = teams.get(t.teamId) ?? { name: t.name, members: [], tally: new Tally() };
      teams.set(t.teamId, team);
      if (t.email === "") continue;
      const email = t.email.toLowerCase();
      team.members.push(email);
      teamsOf.set(email, [...(teamsOf.get(email) ?? []), t.teamId]);
      if (!people.has(email)) people.set(email, new Tally());
    }
    for (const h of holdings(facts.lines)) {
      if (h.start < start || h.start >= end) continue;
      const reply = repliesOf.get(h.conversationId)?.find((t) => t >= h.start && t < h.end);
      const tally = people.get(h.email) ?? new Tally();
      people.set(h.email, tally);
      const sla = slas.get(h.conversationId);
      tally.add(h, reply, sla);
      for (const teamId of teamsOf.get(h.email) ?? []) teams.get(teamId)!.tally.add(h, reply, sla);
    }

    const operators: OperatorFigures[] = [...people]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([email, tally]) => ({
        email,
        name: names.get(email) || email.slice(0, Math.max(0, email.lastIndexOf("@"))) || email,
        ...tally.figures(scores),
      }));
    const teamFigures: TeamFigures[] = [...teams].map(([teamId, t]) => ({
      teamId,
      name: t.name,
      members: t.members,
      ...t.tally.figures(scores),
    }));
    return { from: q.from, to: q.to, timeZone, operators, teams: teamFigures };
  }
}
