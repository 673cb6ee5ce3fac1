import type { AgentDraftRepository } from "../../domain/agent/drafts.js";
import { type DraftRow, draftValues, toDraft } from "../agent-rows.js";
import type { PgDb } from "./db.js";

/** Drafts of chatbots' agents, and the conversations a replay reads, in PostgreSQL. */
export function pgDrafts(db: PgDb): AgentDraftRepository {
  return {
    draft: async (chatbotId) => {
      const [r] = await db.rows<DraftRow>(
        "draft_get",
        "SELECT chatbot_id, account_id, draft, updated_at FROM agent_drafts WHERE chatbot_id = $1",
        [chatbotId],
      );
      return r && toDraft(r);
    },
    putDraft: async (d) =>
      void (await db.count(
        "draft_put",
        `INSERT INTO agent_drafts (chatbot_id, account_id, draft, updated_at) VALUES ($1, $2, $3, $4)
          ON CONFLICT (chatbot_id) DO UPDATE SET draft = excluded.draft, updated_at = excluded.updated_at`,
        draftValues(d),
      )),
    deleteDraft: async (chatbotId) =>
      (await db.count("draft_delete", "DELETE FROM agent_drafts WHERE chatbot_id = $1", [chatbotId])) === 1,
    latestConversations: async (chatbotId, limit) =>
      (
        await db.rows<{ conversation_id: string }>(
          "draft_latest_conversations",
          `SELECT conversation_id FROM conversations WHERE chatbot_id = $1 AND message_count > 0
            ORDER BY created_at DESC, conversation_id DESC LIMIT $2`,
          [chatbotId, limit],
        )
      ).map((r) => r.conversation_id),
  };
}
