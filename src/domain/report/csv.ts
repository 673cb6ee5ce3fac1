// Types and text only (no Node code): the console's browser code builds the CSV download from GetReport's answer.

/** A duration's count and exact nearest-rank percentiles, in whole seconds. */
export interface ReportDuration {
  count: number;
  medianSeconds: number;
  p90Seconds: number;
}

/** A chatbot's figures over a period of local days. */
export interface Report {
  chatbotId: string;
  from: string;
  to: string;
  timeZone: string;
  conversations: number;
  handedOver: number;
  handedOverShare: number;
  days: { date: string; conversations: number; handedOver: number }[];
  firstResponse: ReportDuration;
  timeToClose: ReportDuration;
  ratings: { count: number; average: number; distribution: number[] };
  hours: { hour: number; messages: number }[];
  /** Conversations whose first-response SLA clock ran: answered in time (hits) and not (breaches). */
  sla: { hits: number; breaches: number };
}

/** The report as CSV: one section per figure, a blank line between (RFC 4180; no field needs quoting). */
export function reportCsv(r: Report): string {
  const lines = [
    "figure,value",
    `chatbot_id,${r.chatbotId}`,
    `from,${r.from}`,
    `to,${r.to}`,
    `time_zone,${r.timeZone}`,
    `conversations,${r.conversations}`,
    `handed_over,${r.handedOver}`,
    `handed_over_share,${r.handedOverShare}`,
    `first_response_count,${r.firstResponse.count}`,
    // A figure with nothing measured is an empty cell, not 0 (its count beside it says 0).
    `first_response_median_seconds,${measured(r.firstResponse.count, r.firstResponse.medianSeconds)}`,
    `first_response_p90_seconds,${measured(r.firstResponse.count, r.firstResponse.p90Seconds)}`,
    `time_to_close_count,${r.timeToClose.count}`,
    `time_to_close_median_seconds,${measured(r.timeToClose.count, r.timeToClose.medianSeconds)}`,
    `time_to_close_p90_seconds,${measured(r.timeToClose.count, r.timeToClose.p90Seconds)}`,
    `ratings_count,${r.ratings.count}`,
    `ratings_average,${measured(r.ratings.count, r.ratings.average)}`,
    ...r.ratings.distribution.map((n, i) => `ratings_score_${i + 1},${n}`),
    // No clock ran (no SLA, or nothing went to the team): empty cells, not 0.
    `sla_hits,${measured(r.sla.hits + r.sla.breaches, r.sla.hits)}`,
    `sla_breaches,${measured(r.sla.hits + r.sla.breaches, r.sla.breaches)}`,
    "",
    "date,conversations,handed_over",
    ...r.days.map((d) => `${d.date},${d.conversations},${d.handedOver}`),
    "",
    "hour,messages",
    ...r.hours.map((h) => `${h.hour},${h.messages}`),
  ];
  return `${lines.join("\r\n")}\r\n`;
}

/** A figure, or nothing when none of it was measured. */
function measured(count: number, value: number): string {
  return count === 0 ? "" : String(value);
}
