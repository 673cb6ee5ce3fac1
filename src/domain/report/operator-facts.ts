// What the operator report reads from storage: apart from operators.ts, so that report.ts's storage port names it
// without importing the report's own counting (which imports report.ts's helpers).

/** A timeline line the operator report reads: who a conversation came to, and what ended their holding. */
export interface HoldingLine {
  conversationId: string;
  /** assigned and taken_over start a holding (to toEmail); released, closed and the next assignment end it. */
  kind: string;
  toEmail: string;
  toName: string;
  createdAt: number;
}

/** What the operator report reads from storage for one account's period, counted here the same for both back ends. */
export interface OperatorReportFacts {
  /**
   * Every timeline line at or after the period's start of the account's conversations that came to someone in
   * the period, ordered by conversation then time.
   */
  lines: HoldingLine[];
  /** The instants of the team's messages (operator replies) in those conversations, at or after the start. */
  replies: { conversationId: string; createdAt: number }[];
  /** Those conversations' ratings. */
  ratings: { conversationId: string; score: number }[];
  /**
   * Those conversations whose first-response SLA clock ran: its due instant, the first message of a person in it
   * (null when none), and whether it was breached.
   */
  sla: { conversationId: string; dueAt: number; firstOperatorAt: number | null; breached: boolean }[];
  /** The account's teams by name with each member's e-mail ("" for a team with none): one row per member. */
  teams: { teamId: string; name: string; email: string }[];
}

/** Storage of the operator report's facts. */
export interface OperatorReportRepository {
  operatorFacts(accountId: string, from: number, to: number): Promise<OperatorReportFacts>;
}
