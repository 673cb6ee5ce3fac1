import type { TeamRepository } from "../../domain/account/teams.js";
import { TEAM_SQL, type TeamRow, teamsFrom } from "../team-rows.js";
import type { PgDb } from "./db.js";

const p = (n: number) => `$${n}`;

/** Teams in PostgreSQL (migration 32); their members and chatbots go with them (ON DELETE CASCADE). */
export function pgTeams(db: PgDb): TeamRepository {
  const touch = (accountId: string, teamId: string, at: number) =>
    db.count(
      "teams_touch",
      "UPDATE teams SET updated_at = greatest(updated_at, $3) WHERE account_id = $1 AND team_id = $2",
      [accountId, teamId, at],
    );
  return {
    list: async (accountId, limit) => {
      const [teams, members, chatbots] = await Promise.all([
        db.rows<TeamRow>("teams_list", TEAM_SQL.teams(p), [accountId, limit]),
        db.rows<{ team_id: string; member_id: string }>("teams_members", TEAM_SQL.members(p), [accountId]),
        db.rows<{ team_id: string; chatbot_id: string }>("teams_chatbots", TEAM_SQL.chatbots(p), [accountId]),
      ]);
      return teamsFrom(teams, members, chatbots);
    },
    add: async (t, key) =>
      (await db.count(
        "teams_add",
        `INSERT INTO teams (team_id, account_id, name, name_key, assignment, capacity, created_at, updated_at)
          VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT DO NOTHING`,
        [t.teamId, t.accountId, t.name, key, t.assignment, t.capacity, t.createdAt, t.updatedAt],
      )) === 1,
    update: async (t, key) => {
      const [r] = await db.rows<{ found: boolean; taken: boolean }>(
        "teams_update",
        `WITH found AS (SELECT team_id FROM teams WHERE account_id = $1 AND team_id = $2),
          other AS (SELECT 1 FROM teams WHERE account_id = $1 AND name_key = $4 AND team_id <> $2),
          done AS (UPDATE teams SET name = $3, name_key = $4, assignment = $5, capacity = $6, updated_at = $7
            WHERE account_id = $1 AND team_id = $2 AND NOT EXISTS (SELECT 1 FROM other) RETURNING 1)
          SELECT EXISTS (SELECT 1 FROM found) AS found, EXISTS (SELECT 1 FROM other) AS taken`,
        [t.accountId, t.teamId, t.name, key, t.assignment, t.capacity, t.updatedAt],
      );
      return !r?.found ? "missing" : r.taken ? "taken" : "ok";
    },
    setMembers: async (accountId, teamId, members, at) => {
      await db.count("team_members_clear", "DELETE FROM team_members WHERE account_id = $1 AND team_id = $2", [
        accountId,
        teamId,
      ]);
      if (members.length > 0)
        await db.count(
          "team_members_put",
          `INSERT INTO team_members (team_id, member_id, account_id, email)
            SELECT $1, m, $2, e FROM unnest($3::text[], $4::text[]) AS u(m, e)`,
          [teamId, accountId, members.map((m) => m.memberId), members.map((m) => m.email)],
        );
      await touch(accountId, teamId, at);
    },
    setChatbots: async (accountId, teamId, ids, at) => {
      await db.count("team_chatbots_clear", "DELETE FROM team_chatbots WHERE account_id = $1 AND team_id = $2", [
        accountId,
        teamId,
      ]);
      if (ids.length > 0)
        await db.count(
          "team_chatbots_put",
          "INSERT INTO team_chatbots (chatbot_id, team_id, account_id) SELECT c, $1, $2 FROM unnest($3::text[]) AS c",
          [teamId, accountId, ids],
        );
      await touch(accountId, teamId, at);
    },
    remove: async (accountId, teamId) =>
      (await db.count("teams_remove", "DELETE FROM teams WHERE account_id = $1 AND team_id = $2", [
        accountId,
        teamId,
      ])) === 1,
    hiddenFor: async (accountId, memberId) =>
      (await db.rows<{ chatbot_id: string }>("teams_hidden", TEAM_SQL.hidden(p), [accountId, memberId])).map(
        (r) => r.chatbot_id,
      ),
  };
}
