import type { AttachmentRepository } from "../../domain/conversation/repository.js";
import { type FileRow, fileOf } from "../attachment-rows.js";
import type { PgDb } from "./db.js";

/** The files sent with messages, in PostgreSQL (a bytea each), deleted with their message. */
export function pgAttachments(db: PgDb): AttachmentRepository {
  return {
    put: async (f) =>
      void (await db.count(
        "attachment_put",
        `INSERT INTO attachment_files (attachment_id, message_id, conversation_id, account_id, name, content_type, bytes,
           created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
        [
          f.attachmentId,
          f.messageId,
          f.conversationId,
          f.accountId,
          f.name,
          f.contentType,
          Buffer.from(f.bytes),
          f.createdAt,
        ],
      )),
    file: async (id) => {
      const [r] = await db.rows(
        "attachment_get",
        "SELECT attachment_id, name, content_type, bytes FROM attachment_files WHERE attachment_id = $1",
        [id],
      );
      return r && fileOf(r as unknown as FileRow);
    },
    ofConversations: async (ids) => {
      if (ids.length === 0) return [];
      const rows = await db.rows(
        "attachment_of_conversations",
        `SELECT f.attachment_id, f.name, f.content_type, f.bytes, f.message_id FROM attachment_files f
         JOIN messages m ON m.message_id = f.message_id
         WHERE f.conversation_id = ANY($1) ORDER BY m.conversation_id, m.message_order`,
        [ids],
      );
      return rows.map((r) => ({ ...fileOf(r as unknown as FileRow), messageId: r.message_id as string }));
    },
  };
}
