/** Where a tool call that needs a person's approval stands. */
export type ApprovalStatus = "pending" | "approved" | "refused";

/**
 * A tool call waiting for (or given) a person's approval: stored with the agent's reply that asked for it, so that the
 * wait survives a restart and any instance can carry on once a person decides.
 */
export interface ToolApprovalRecord {
  accountId: string;
  chatbotId: string;
  conversationId: string;
  /** The call's id as the model gave it (unique in its conversation's waiting calls). */
  callId: string;
  /** The agent's reply that recorded the call as awaiting approval. */
  messageId: string;
  /** That reply's place in the conversation (the history a decision carries on from ends there). */
  messageOrder: number;
  toolName: string;
  /** The arguments as the model wrote them (JSON text, checked against the tool's schema). */
  arguments: string;
  status: ApprovalStatus;
  /** Who decided (an e-mail of the account's team; "" while pending). */
  decidedBy: string;
  decidedAt: number | null;
  createdAt: number;
}

/** Storage of tool calls waiting for approval. */
export interface ToolApprovalRepository {
  /** Records a waiting call; a call already recorded (same conversation and id) is left as it is. */
  add(a: ToolApprovalRecord): Promise<void>;
  get(conversationId: string, callId: string): Promise<ToolApprovalRecord | undefined>;
  /** The conversation's calls, oldest first (at most `limit`). */
  forConversation(conversationId: string, limit: number): Promise<ToolApprovalRecord[]>;
  /** Moves a pending call to `status`; false when it was not pending (another person decided first). */
  decide(
    conversationId: string,
    callId: string,
    status: Exclude<ApprovalStatus, "pending">,
    by: string,
    at: number,
  ): Promise<boolean>;
}

/** Approvals a conversation lists at most. */
export const MAX_APPROVALS = 200;
