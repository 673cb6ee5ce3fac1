import type { TeamRepository } from "../../../domain/account/teams.js";
import type { Sync } from "../../sync.js";
import { TEAM_SQL, type TeamRow, teamsFrom } from "../../team-rows.js";
import type { Db } from "../database.js";

const q = () => "?";

/** Teams in SQLite (migration 38); their members and chatbots go with them (ON DELETE CASCADE). */
export function sqliteTeams(db: Db): Sync<TeamRepository> {
  const teams = db.prepare<[string, number], TeamRow>(TEAM_SQL.teams(q));
  const members = db.prepare<[string], { team_id: string; member_id: string }>(TEAM_SQL.members(q));
  const chatbots = db.prepare<[string], { team_id: string; chatbot_id: string }>(TEAM_SQL.chatbots(q));
  const hidden = db.prepare<[string, string], string>(TEAM_SQL.hidden(q)).pluck();
  const add = db.prepare(
    `INSERT INTO teams (team_id, account_id, name, name_key, assignment, capacity, created_at, updated_at)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
  );
  const exists = db
    .prepare<[string, string], number>("SELECT 1 FROM teams WHERE account_id = ? AND team_id = ?")
    .pluck();
  const update = db.prepare(
    `UPDATE OR IGNORE teams SET name = ?, name_key = ?, assignment = ?, capacity = ?, updated_at = ?
      WHERE account_id = ? AND team_id = ?`,
  );
  const clearMembers = db.prepare("DELETE FROM team_members WHERE account_id = ? AND team_id = ?");
  const putMember = db.prepare("INSERT INTO team_members (team_id, member_id, account_id, email) VALUES (?, ?, ?, ?)");
  const clearChatbots = db.prepare("DELETE FROM team_chatbots WHERE account_id = ? AND team_id = ?");
  const putChatbot = db.prepare("INSERT INTO team_chatbots (chatbot_id, team_id, account_id) VALUES (?, ?, ?)");
  const touch = db.prepare("UPDATE teams SET updated_at = max(updated_at, ?) WHERE account_id = ? AND team_id = ?");
  const remove = db.prepare("DELETE FROM teams WHERE account_id = ? AND team_id = ?");
  return {
    list: (accountId, limit) => teamsFrom(teams.all(accountId, limit), members.all(accountId), chatbots.all(accountId)),
    add: (t, key) =>
      add.run(t.teamId, t.accountId, t.name, key, t.assignment, t.capacity, t.createdAt, t.updatedAt).changes === 1,
    update: (t, key) => {
      if (exists.get(t.accountId, t.teamId) === undefined) return "missing";
      const n = update.run(t.name, key, t.assignment, t.capacity, t.updatedAt, t.accountId, t.teamId).changes;
      return n === 1 ? "ok" : "taken";
    },
    setMembers: (accountId, teamId, list, at) => {
      clearMembers.run(accountId, teamId);
      for (const m of list) putMember.run(teamId, m.memberId, accountId, m.email);
      touch.run(at, accountId, teamId);
    },
    setChatbots: (accountId, teamId, ids, at) => {
      clearChatbots.run(accountId, teamId);
      for (const id of ids) putChatbot.run(id, teamId, accountId);
      touch.run(at, accountId, teamId);
    },
    remove: (accountId, teamId) => remove.run(accountId, teamId).changes === 1,
    hiddenFor: (accountId, memberId) => hidden.all(accountId, memberId),
  };
}
