import type { ToolApprovalRepository } from "../../../domain/agent/approvals.js";
import { APPROVAL_COLUMNS, type ApprovalRow, approvalValues, toApproval } from "../../agent-rows.js";
import type { Sync } from "../../sync.js";
import type { Db } from "../database.js";

/** Tool calls waiting for a person's approval, in SQLite. */
export function sqliteApprovals(db: Db): Sync<ToolApprovalRepository> {
  const add = db.prepare(
    `INSERT INTO tool_approvals (${APPROVAL_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
  );
  const get = db.prepare<[string, string], ApprovalRow>(
    `SELECT ${APPROVAL_COLUMNS} FROM tool_approvals WHERE conversation_id = ? AND call_id = ?`,
  );
  const list = db.prepare<[string, number], ApprovalRow>(
    `SELECT ${APPROVAL_COLUMNS} FROM tool_approvals WHERE conversation_id = ? ORDER BY created_at, call_id LIMIT ?`,
  );
  const decide = db.prepare(
    `UPDATE tool_approvals SET status = ?, decided_by = ?, decided_at = ?
      WHERE conversation_id = ? AND call_id = ? AND status = 'pending'`,
  );
  return {
    add: (a) => void add.run(...approvalValues(a)),
    get: (conversationId, callId) => {
      const r = get.get(conversationId, callId);
      return r && toApproval(r);
    },
    forConversation: (conversationId, limit) => list.all(conversationId, limit).map(toApproval),
    decide: (conversationId, callId, status, by, at) =>
      decide.run(status, by, at, conversationId, callId).changes === 1,
  };
}
