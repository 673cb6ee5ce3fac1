import type { LabelRecord, LabelRepository, Priority } from "../../../domain/conversation/labels.js";
import type { Sync } from "../../sync.js";
import type { Db } from "../database.js";

interface LabelRow {
  label_id: string;
  account_id: string;
  name: string;
  created_at: number;
}

const toLabel = (r: LabelRow): LabelRecord => ({
  labelId: r.label_id,
  accountId: r.account_id,
  name: r.name,
  createdAt: Number(r.created_at),
});

/** Labels in SQLite (migration 32); a conversation's go with it (ON DELETE CASCADE). */
export function sqliteLabels(db: Db): Sync<LabelRepository> {
  const list = db.prepare<[string, number], LabelRow>(
    "SELECT label_id, account_id, name, created_at FROM labels WHERE account_id = ? ORDER BY name_key, label_id LIMIT ?",
  );
  const add = db.prepare(
    "INSERT INTO labels (label_id, account_id, name, name_key, created_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
  );
  const exists = db
    .prepare<[string, string], number>("SELECT 1 FROM labels WHERE account_id = ? AND label_id = ?")
    .pluck();
  const rename = db.prepare("UPDATE OR IGNORE labels SET name = ?, name_key = ? WHERE account_id = ? AND label_id = ?");
  const remove = db.prepare("DELETE FROM labels WHERE account_id = ? AND label_id = ?");
  const of = db
    .prepare<[string], string>("SELECT label_id FROM conversation_labels WHERE conversation_id = ? ORDER BY label_id")
    .pluck();
  const clear = db.prepare("DELETE FROM conversation_labels WHERE conversation_id = ?");
  const priority = db.prepare<[string], string>("SELECT priority FROM conversations WHERE conversation_id = ?").pluck();
  const setPriority = db.prepare("UPDATE conversations SET priority = ? WHERE conversation_id = ?");
  const put = db.prepare("INSERT INTO conversation_labels (conversation_id, label_id, account_id) VALUES (?, ?, ?)");
  return {
    list: (accountId, limit) => list.all(accountId, limit).map(toLabel),
    add: (l, key) => add.run(l.labelId, l.accountId, l.name, key, l.createdAt).changes === 1,
    rename: (accountId, labelId, name, key) => {
      if (!exists.get(accountId, labelId)) return "missing";
      return rename.run(name, key, accountId, labelId).changes === 1 ? "ok" : "taken";
    },
    remove: (accountId, labelId) => remove.run(accountId, labelId).changes === 1,
    forConversation: (conversationId) => of.all(conversationId),
    priority: (conversationId) => (priority.get(conversationId) ?? "none") as Priority,
    setPriority: (conversationId, p) => void setPriority.run(p, conversationId),
    setForConversation: (accountId, conversationId, labelIds) => {
      clear.run(conversationId);
      for (const l of labelIds) put.run(conversationId, l, accountId);
    },
  };
}
