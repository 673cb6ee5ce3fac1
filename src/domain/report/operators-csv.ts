// Types and text only (no Node code): the console's browser code builds the CSV download from GetOperatorReport.
import type { ReportDuration } from "./csv.js";

/** The customers' ratings of a set of conversations. */
export interface FiguresRatings {
  count: number;
  /** 1 to 5; 0 when none. */
  average: number;
  /** Five counts, score 1 first. */
  distribution: number[];
}

/** What one person or team did over the period; a figure measured on nothing has count 0 (shown "—"). */
export interface HeldFigures {
  conversations: number;
  firstResponse: ReportDuration;
  resolution: ReportDuration;
  ratings: FiguresRatings;
  /** Ratings of 4 or 5 over all ratings, 0 to 1; 0 when none. */
  csat: number;
  /** The first-response SLA's outcomes of the conversations held; both 0 when no clock ran (shown "—"). */
  sla: { hits: number; breaches: number };
}

export interface OperatorFigures extends HeldFigures {
  email: string;
  name: string;
}

export interface TeamFigures extends HeldFigures {
  teamId: string;
  name: string;
  members: string[];
}

/** Every operator's and team's figures over a period of local days. */
export interface OperatorReport {
  from: string;
  to: string;
  timeZone: string;
  operators: OperatorFigures[];
  teams: TeamFigures[];
}

const HEADER = [
  "kind",
  "team_id",
  "email",
  "name",
  "conversations",
  "first_response_count",
  "first_response_median_seconds",
  "first_response_p90_seconds",
  "resolution_count",
  "resolution_median_seconds",
  "resolution_p90_seconds",
  "ratings_count",
  "ratings_average",
  "csat",
  "sla_hits",
  "sla_breaches",
];

/**
 * The report as CSV (RFC 4180): the period, then one row per operator and per team. A figure measured on nothing
 * is an empty cell, never 0 (its count beside it says 0).
 */
export function operatorReportCsv(r: OperatorReport): string {
  const row = (kind: string, teamId: string, email: string, name: string, f: HeldFigures) =>
    [
      kind,
      teamId,
      cell(email),
      cell(name),
      String(f.conversations),
      String(f.firstResponse.count),
      measured(f.firstResponse.count, f.firstResponse.medianSeconds),
      measured(f.firstResponse.count, f.firstResponse.p90Seconds),
      String(f.resolution.count),
      measured(f.resolution.count, f.resolution.medianSeconds),
      measured(f.resolution.count, f.resolution.p90Seconds),
      String(f.ratings.count),
      measured(f.ratings.count, f.ratings.average),
      measured(f.ratings.count, f.csat),
      measured(f.sla.hits + f.sla.breaches, f.sla.hits),
      measured(f.sla.hits + f.sla.breaches, f.sla.breaches),
    ].join(",");
  const lines = [
    "figure,value",
    `from,${r.from}`,
    `to,${r.to}`,
    `time_zone,${r.timeZone}`,
    "",
    HEADER.join(","),
    ...r.operators.map((o) => row("operator", "", o.email, o.name, o)),
    ...r.teams.map((t) => row("team", t.teamId, t.members.join(" "), t.name, t)),
  ];
  return `${lines.join("\r\n")}\r\n`;
}

/** A figure, or nothing when none of it was measured. */
function measured(count: number, value: number): string {
  return count === 0 ? "" : String(value);
}

/**
 * A text cell: quoted when it holds a comma, quote or line break, and a leading = + - @ made inert with a quote
 * mark (a spreadsheet would run it as a formula).
 */
function cell(v: string): string {
  const safe = /^[=+\-@\t\r]/.test(v) ? `'${v}` : v;
  return /[",\r\n]/.test(safe) ? `"${safe.replaceAll('"', '""')}"` : safe;
}
