import type { PresenceRepository, RoutingRepository } from "../../../domain/conversation/routing.js";
import type { Sync } from "../../sync.js";
import type { Db } from "../database.js";

/** Auto-assignment's reads and writes in SQLite (migration 38): a unit of work is BEGIN IMMEDIATE, so no lock. */
export function sqliteRouting(db: Db): Sync<RoutingRepository> {
  const last = db.prepare<[string], string>("SELECT last_assigned FROM teams WHERE team_id = ?").pluck();
  const setLast = db.prepare("UPDATE teams SET last_assigned = ? WHERE team_id = ?");
  // The members who are still the account's people (its owner, or a member).
  const emails = db
    .prepare<[string], string>(
      `SELECT tm.email FROM team_members tm WHERE tm.team_id = ? AND (tm.member_id = tm.account_id OR EXISTS (
        SELECT 1 FROM members m WHERE m.member_id = tm.member_id AND m.account_id = tm.account_id AND m.joined_at IS NOT NULL))
      ORDER BY lower(tm.email)`,
    )
    .pluck();
  const loads = db.prepare<[string, string, number], { who: string; n: number }>(
    `SELECT lower(assigned_to) AS who, count(*) AS n FROM conversations
      WHERE account_id = ? AND status = 'live' AND lower(assigned_to) IN (SELECT value FROM json_each(?))
        AND coalesce(last_message_at, created_at) >= ?
      GROUP BY lower(assigned_to)`,
  );
  const waiting = db
    .prepare<[string, string, number, number], string>(
      `SELECT c.conversation_id FROM conversation_handovers h JOIN conversations c ON c.conversation_id = h.conversation_id
      WHERE c.account_id = ? AND c.chatbot_id IN (SELECT value FROM json_each(?)) AND c.assigned_to = 'ai_agent'
        AND c.status = 'live' AND coalesce(c.last_message_at, c.created_at) >= ?
      ORDER BY h.at, c.conversation_id LIMIT ?`,
    )
    .pluck();
  return {
    lockTeam: (teamId) => last.get(teamId),
    memberEmails: (teamId) => emails.all(teamId),
    setLastAssigned: (teamId, email) => void setLast.run(email, teamId),
    loads: (accountId, list, liveSince) =>
      new Map(loads.all(accountId, JSON.stringify(list), liveSince).map((r) => [r.who, r.n])),
    waiting: (accountId, chatbotIds, liveSince, limit) =>
      waiting.all(accountId, JSON.stringify(chatbotIds), liveSince, limit),
  };
}

/** Who is in the console and who is away, in SQLite (migration 38). */
export function sqlitePresence(db: Db): Sync<PresenceRepository> {
  const beat = db.prepare(
    `INSERT INTO operator_presence (account_id, email, online_until, away) VALUES (?, ?, ?, 0)
      ON CONFLICT (account_id, email) DO UPDATE SET online_until = max(online_until, excluded.online_until)`,
  );
  const leave = db.prepare("UPDATE operator_presence SET online_until = 0 WHERE account_id = ? AND email = ?");
  const setAway = db.prepare(
    `INSERT INTO operator_presence (account_id, email, online_until, away) VALUES (?, ?, 0, ?)
      ON CONFLICT (account_id, email) DO UPDATE SET away = excluded.away`,
  );
  const isAway = db
    .prepare<[string, string], number>("SELECT away FROM operator_presence WHERE account_id = ? AND email = ?")
    .pluck();
  const available = db
    .prepare<[string, string, number], string>(
      `SELECT email FROM operator_presence WHERE account_id = ? AND email IN (SELECT value FROM json_each(?))
        AND online_until > ? AND away = 0 ORDER BY email`,
    )
    .pluck();
  return {
    beat: (accountId, email, until) => void beat.run(accountId, email, until),
    leave: (accountId, email) => void leave.run(accountId, email),
    setAway: (accountId, email, away) => void setAway.run(accountId, email, away ? 1 : 0),
    isAway: (accountId, email) => isAway.get(accountId, email) === 1,
    available: (accountId, emails, now) => available.all(accountId, JSON.stringify(emails), now),
  };
}
