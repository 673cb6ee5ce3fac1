import type { ActivityRepository } from "../../domain/conversation/repository.js";
import { ACTIVITY_COLUMNS, type ActivityRow, activityValues, toActivity } from "../activity-rows.js";
import type { PgDb } from "./db.js";

/** Conversation timelines in PostgreSQL; erasure and retention delete them with their conversation (privacy.ts). */
export function pgActivities(db: PgDb): ActivityRepository {
  return {
    add: async (a) =>
      void (await db.count(
        "activity_add",
        `INSERT INTO conversation_activity (${ACTIVITY_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
        activityValues(a),
      )),
    // The latest `limit`, answered oldest first.
    forConversation: async (conversationId, limit) =>
      (
        await db.rows<ActivityRow>(
          "activity_list",
          `SELECT ${ACTIVITY_COLUMNS} FROM conversation_activity WHERE conversation_id = $1
            ORDER BY created_at DESC, activity_id DESC LIMIT $2`,
          [conversationId, limit],
        )
      )
        .reverse()
        .map(toActivity),
  };
}
