import type { LabelRecord, LabelRepository, Priority } from "../../domain/conversation/labels.js";
import type { PgDb } from "./db.js";

interface LabelRow {
  label_id: string;
  account_id: string;
  name: string;
  created_at: string | number;
}

const toLabel = (r: LabelRow): LabelRecord => ({
  labelId: r.label_id,
  accountId: r.account_id,
  name: r.name,
  createdAt: Number(r.created_at),
});

/** Labels in PostgreSQL (migration 26); a conversation's go with it (ON DELETE CASCADE). */
export function pgLabels(db: PgDb): LabelRepository {
  return {
    list: async (accountId, limit) =>
      (
        await db.rows<LabelRow>(
          "labels_list",
          `SELECT label_id, account_id, name, created_at FROM labels WHERE account_id = $1
            ORDER BY name_key, label_id LIMIT $2`,
          [accountId, limit],
        )
      ).map(toLabel),
    add: async (l, key) =>
      (await db.count(
        "labels_add",
        `INSERT INTO labels (label_id, account_id, name, name_key, created_at) VALUES ($1, $2, $3, $4, $5)
          ON CONFLICT DO NOTHING`,
        [l.labelId, l.accountId, l.name, key, l.createdAt],
      )) === 1,
    rename: async (accountId, labelId, name, key) => {
      const [r] = await db.rows<{ found: boolean; taken: boolean }>(
        "labels_rename",
        `WITH found AS (SELECT label_id FROM labels WHERE account_id = $1 AND label_id = $2),
          other AS (SELECT 1 FROM labels WHERE account_id = $1 AND name_key = $4 AND label_id <> $2),
          done AS (UPDATE labels SET name = $3, name_key = $4 WHERE account_id = $1 AND label_id = $2
            AND NOT EXISTS (SELECT 1 FROM other) RETURNING 1)
          SELECT EXISTS (SELECT 1 FROM found) AS found, EXISTS (SELECT 1 FROM other) AS taken`,
        [accountId, labelId, name, key],
      );
      return !r?.found ? "missing" : r.taken ? "taken" : "ok";
    },
    remove: async (accountId, labelId) =>
      (await db.count("labels_remove", "DELETE FROM labels WHERE account_id = $1 AND label_id = $2", [
        accountId,
        labelId,
      ])) === 1,
    forConversation: async (conversationId) =>
      (
        await db.rows<{ label_id: string }>(
          "labels_of",
          "SELECT label_id FROM conversation_labels WHERE conversation_id = $1 ORDER BY label_id",
          [conversationId],
        )
      ).map((r) => r.label_id),
    priority: async (conversationId) =>
      ((
        await db.rows<{ priority: string }>(
          "conv_priority",
          "SELECT priority FROM conversations WHERE conversation_id = $1",
          [conversationId],
        )
      )[0]?.priority ?? "none") as Priority,
    setPriority: async (conversationId, p) =>
      void (await db.count("conv_set_priority", "UPDATE conversations SET priority = $1 WHERE conversation_id = $2", [
        p,
        conversationId,
      ])),
    setForConversation: async (accountId, conversationId, labelIds) => {
      await db.count("labels_clear", "DELETE FROM conversation_labels WHERE conversation_id = $1", [conversationId]);
      if (labelIds.length > 0)
        await db.count(
          "labels_put",
          `INSERT INTO conversation_labels (conversation_id, label_id, account_id)
            SELECT $1, unnest($2::text[]), $3`,
          [conversationId, labelIds, accountId],
        );
    },
  };
}
