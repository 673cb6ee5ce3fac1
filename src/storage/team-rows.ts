import type { Assignment, TeamRecord } from "../domain/account/teams.js";

/** A team's row as both back ends read it (bigint columns may come back as strings). */
export interface TeamRow {
  team_id: string;
  account_id: string;
  name: string;
  assignment: string;
  capacity: number | string;
  created_at: number | string;
  updated_at: number | string;
}

/** The account's team rows joined with their member and chatbot rows, as records in the rows' (name) order. */
export function teamsFrom(
  rows: readonly TeamRow[],
  members: readonly { team_id: string; member_id: string }[],
  chatbots: readonly { team_id: string; chatbot_id: string }[],
): TeamRecord[] {
  const teams = rows.map(
    (r): TeamRecord => ({
      teamId: r.team_id,
      accountId: r.account_id,
      name: r.name,
      assignment: r.assignment as Assignment,
      capacity: Number(r.capacity),
      memberIds: [],
      chatbotIds: [],
      createdAt: Number(r.created_at),
      updatedAt: Number(r.updated_at),
    }),
  );
  const byId = new Map(teams.map((t) => [t.teamId, t]));
  for (const m of members) byId.get(m.team_id)?.memberIds.push(m.member_id);
  for (const c of chatbots) byId.get(c.team_id)?.chatbotIds.push(c.chatbot_id);
  return teams;
}

/** The SELECTs of a list (parameters: the account, then the limit): teams by name, members by e-mail, chatbots. */
export const TEAM_SQL = {
  teams: (p: (n: number) => string) =>
    `SELECT team_id, account_id, name, assignment, capacity, created_at, updated_at FROM teams
      WHERE account_id = ${p(1)} ORDER BY name_key, team_id LIMIT ${p(2)}`,
  // A removed member is no team's: only the owner and the account's members are listed.
  members: (p: (n: number) => string) =>
    `SELECT tm.team_id, tm.member_id FROM team_members tm WHERE tm.account_id = ${p(1)}
      AND (tm.member_id = tm.account_id OR EXISTS (SELECT 1 FROM members m WHERE m.member_id = tm.member_id
        AND m.account_id = tm.account_id))
      ORDER BY lower(tm.email), tm.member_id`,
  chatbots: (p: (n: number) => string) =>
    `SELECT team_id, chatbot_id FROM team_chatbots WHERE account_id = ${p(1)} ORDER BY chatbot_id`,
  // The chatbots of the account's teams the member is in none of.
  hidden: (p: (n: number) => string) =>
    `SELECT tc.chatbot_id FROM team_chatbots tc WHERE tc.account_id = ${p(1)}
      AND NOT EXISTS (SELECT 1 FROM team_members tm WHERE tm.team_id = tc.team_id AND tm.member_id = ${p(2)})
      ORDER BY tc.chatbot_id`,
};
