import type { ToolApprovalRepository } from "../../domain/agent/approvals.js";
import { APPROVAL_COLUMNS, type ApprovalRow, approvalValues, toApproval } from "../agent-rows.js";
import type { PgDb } from "./db.js";

/** Tool calls waiting for a person's approval, in PostgreSQL. */
export function pgApprovals(db: PgDb): ToolApprovalRepository {
  return {
    add: async (a) =>
      void (await db.count(
        "approval_add",
        `INSERT INTO tool_approvals (${APPROVAL_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
          ON CONFLICT DO NOTHING`,
        approvalValues(a),
      )),
    get: async (conversationId, callId) => {
      const [r] = await db.rows<ApprovalRow>(
        "approval_get",
        `SELECT ${APPROVAL_COLUMNS} FROM tool_approvals WHERE conversation_id = $1 AND call_id = $2`,
        [conversationId, callId],
      );
      return r && toApproval(r);
    },
    forConversation: async (conversationId, limit) =>
      (
        await db.rows<ApprovalRow>(
          "approval_list",
          `SELECT ${APPROVAL_COLUMNS} FROM tool_approvals WHERE conversation_id = $1
            ORDER BY created_at, call_id LIMIT $2`,
          [conversationId, limit],
        )
      ).map(toApproval),
    decide: async (conversationId, callId, status, by, at) =>
      (await db.count(
        "approval_decide",
        `UPDATE tool_approvals SET status = $1, decided_by = $2, decided_at = $3
          WHERE conversation_id = $4 AND call_id = $5 AND status = 'pending'`,
        [status, by, at, conversationId, callId],
      )) === 1,
  };
}
