import type { AttachmentRepository } from "../../../domain/conversation/repository.js";
import { type FileRow, fileOf } from "../../attachment-rows.js";
import type { Sync } from "../../sync.js";
import type { Db } from "../database.js";

/** The files sent with messages, in SQLite (a BLOB each), deleted with their message. */
export function sqliteAttachments(db: Db): Sync<AttachmentRepository> {
  const insert = db.prepare(
    `INSERT INTO attachment_files (attachment_id, message_id, conversation_id, account_id, name, content_type, bytes,
       created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const byId = db.prepare<[string], FileRow>(
    "SELECT attachment_id, name, content_type, bytes FROM attachment_files WHERE attachment_id = ?",
  );
  return {
    put: (f) =>
      void insert.run(
        f.attachmentId,
        f.messageId,
        f.conversationId,
        f.accountId,
        f.name,
        f.contentType,
        Buffer.from(f.bytes),
        f.createdAt,
      ),
    file: (id) => {
      const r = byId.get(id);
      return r && fileOf(r);
    },
    ofConversations: (ids) => {
      if (ids.length === 0) return [];
      const rows = db
        .prepare<string[], FileRow & { message_id: string }>(
          `SELECT f.attachment_id, f.name, f.content_type, f.bytes, f.message_id FROM attachment_files f
           JOIN messages m ON m.message_id = f.message_id
           WHERE f.conversation_id IN (${ids.map(() => "?").join(", ")}) ORDER BY m.conversation_id, m.message_order`,
        )
        .all(...ids);
      return rows.map((r) => ({ ...fileOf(r), messageId: r.message_id }));
    },
  };
}
