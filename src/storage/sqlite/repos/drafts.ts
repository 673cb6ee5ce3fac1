import type { AgentDraftRepository } from "../../../domain/agent/drafts.js";
import { type DraftRow, draftValues, toDraft } from "../../agent-rows.js";
import type { Sync } from "../../sync.js";
import type { Db } from "../database.js";

/** Drafts of chatbots' agents, and the conversations a replay reads, in SQLite. */
export function sqliteDrafts(db: Db): Sync<AgentDraftRepository> {
  const get = db.prepare<[string], DraftRow>(
    "SELECT chatbot_id, account_id, draft, updated_at FROM agent_drafts WHERE chatbot_id = ?",
  );
  const put = db.prepare(
    `INSERT INTO agent_drafts (chatbot_id, account_id, draft, updated_at) VALUES (?, ?, ?, ?)
      ON CONFLICT (chatbot_id) DO UPDATE SET draft = excluded.draft, updated_at = excluded.updated_at`,
  );
  const del = db.prepare("DELETE FROM agent_drafts WHERE chatbot_id = ?");
  const latest = db.prepare<[string, number], { conversation_id: string }>(
    `SELECT conversation_id FROM conversations WHERE chatbot_id = ? AND message_count > 0
      ORDER BY created_at DESC, conversation_id DESC LIMIT ?`,
  );
  return {
    draft: (chatbotId) => {
      const r = get.get(chatbotId);
      return r && toDraft(r);
    },
    putDraft: (d) => void put.run(...draftValues(d)),
    deleteDraft: (chatbotId) => del.run(chatbotId).changes === 1,
    latestConversations: (chatbotId, limit) => latest.all(chatbotId, limit).map((r) => r.conversation_id),
  };
}
