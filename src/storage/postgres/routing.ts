import type { PresenceRepository, RoutingRepository } from "../../domain/conversation/routing.js";
import type { PgDb } from "./db.js";

/** Auto-assignment's reads and writes in PostgreSQL (migration 32): the team's row lock orders instances. */
export function pgRouting(db: PgDb): RoutingRepository {
  return {
    // Held to the unit's commit: of two instances routing one team, the second waits and then sees the first's.
    lockTeam: async (teamId) =>
      (
        await db.rows<{ last_assigned: string }>(
          "routing_lock",
          "SELECT last_assigned FROM teams WHERE team_id = $1 FOR UPDATE",
          [teamId],
        )
      )[0]?.last_assigned,
    memberEmails: async (teamId) =>
      (
        await db.rows<{ email: string }>(
          "routing_members",
          `SELECT tm.email FROM team_members tm WHERE tm.team_id = $1 AND (tm.member_id = tm.account_id OR EXISTS (
            SELECT 1 FROM members m WHERE m.member_id = tm.member_id AND m.account_id = tm.account_id
              AND m.joined_at IS NOT NULL))
          ORDER BY lower(tm.email)`,
          [teamId],
        )
      ).map((r) => r.email),
    setLastAssigned: async (teamId, email) =>
      void (await db.count("routing_last", "UPDATE teams SET last_assigned = $2 WHERE team_id = $1", [teamId, email])),
    loads: async (accountId, emails, liveSince) =>
      new Map(
        (
          await db.rows<{ who: string; n: string | number }>(
            "routing_loads",
            `SELECT lower(assigned_to) AS who, count(*) AS n FROM conversations
              WHERE account_id = $1 AND status = 'live' AND lower(assigned_to) = ANY($2::text[])
                AND coalesce(last_message_at, created_at) >= $3
              GROUP BY lower(assigned_to)`,
            [accountId, emails, liveSince],
          )
        ).map((r) => [r.who, Number(r.n)]),
      ),
    waiting: async (accountId, chatbotIds, liveSince, limit) =>
      (
        await db.rows<{ conversation_id: string }>(
          "routing_waiting",
          `SELECT c.conversation_id FROM conversation_handovers h
            JOIN conversations c ON c.conversation_id = h.conversation_id
            WHERE c.account_id = $1 AND c.chatbot_id = ANY($2::text[]) AND c.assigned_to = 'ai_agent'
              AND c.status = 'live' AND coalesce(c.last_message_at, c.created_at) >= $3
            ORDER BY h.at, c.conversation_id LIMIT $4`,
          [accountId, chatbotIds, liveSince, limit],
        )
      ).map((r) => r.conversation_id),
  };
}

/** Who is in the console and who is away, in PostgreSQL (migration 32): shared by every instance. */
export function pgPresence(db: PgDb): PresenceRepository {
  return {
    beat: async (accountId, email, until) =>
      void (await db.count(
        "presence_beat",
        `INSERT INTO operator_presence (account_id, email, online_until, away) VALUES ($1, $2, $3, false)
          ON CONFLICT (account_id, email) DO UPDATE
            SET online_until = greatest(operator_presence.online_until, excluded.online_until)`,
        [accountId, email, until],
      )),
    leave: async (accountId, email) =>
      void (await db.count(
        "presence_leave",
        "UPDATE operator_presence SET online_until = 0 WHERE account_id = $1 AND email = $2",
        [accountId, email],
      )),
    setAway: async (accountId, email, away) =>
      void (await db.count(
        "presence_away",
        `INSERT INTO operator_presence (account_id, email, online_until, away) VALUES ($1, $2, 0, $3)
          ON CONFLICT (account_id, email) DO UPDATE SET away = excluded.away`,
        [accountId, email, away],
      )),
    isAway: async (accountId, email) =>
      (
        await db.rows<{ away: boolean }>(
          "presence_is_away",
          "SELECT away FROM operator_presence WHERE account_id = $1 AND email = $2",
          [accountId, email],
        )
      )[0]?.away === true,
    available: async (accountId, emails, now) =>
      (
        await db.rows<{ email: string }>(
          "presence_available",
          `SELECT email FROM operator_presence WHERE account_id = $1 AND email = ANY($2::text[])
            AND online_until > $3 AND NOT away ORDER BY email`,
          [accountId, emails, now],
        )
      ).map((r) => r.email),
  };
}
