import type { ActivityRepository } from "../../../domain/conversation/repository.js";
import { ACTIVITY_COLUMNS, type ActivityRow, activityValues, toActivity } from "../../activity-rows.js";
import type { Sync } from "../../sync.js";
import type { Db } from "../database.js";

/** Conversation timelines in SQLite; erasure and retention delete them with their conversation (repos/privacy.ts). */
export function sqliteActivities(db: Db): Sync<ActivityRepository> {
  const add = db.prepare(
    `INSERT INTO conversation_activity (${ACTIVITY_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  // The latest `limit`, answered oldest first.
  const list = db.prepare<[string, number], ActivityRow>(
    `SELECT ${ACTIVITY_COLUMNS} FROM conversation_activity WHERE conversation_id = ?
      ORDER BY created_at DESC, activity_id DESC LIMIT ?`,
  );
  return {
    add: (a) => void add.run(...activityValues(a)),
    forConversation: (conversationId, limit) => list.all(conversationId, limit).reverse().map(toActivity),
  };
}
