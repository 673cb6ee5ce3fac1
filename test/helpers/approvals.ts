import { randomUUID } from "node:crypto";
import type { App } from "../../src/app.js";

let calls = 0;

/**
 * A tool call waiting for a person's approval in the account's conversation, stored as the agent's loop stores one
 * (for the suites that need a call to decide without a model): answers its id.
 */
export async function storeWaitingCall(
  app: App,
  a: { accountId: string; chatbotId: string },
  conversationId: string,
): Promise<string> {
  const callId = `call_${++calls}`;
  await app.store.approvals.add({
    accountId: a.accountId,
    chatbotId: a.chatbotId,
    conversationId,
    callId,
    messageId: randomUUID(),
    messageOrder: 2,
    toolName: "refund_order",
    arguments: "{}",
    status: "pending",
    decidedBy: "",
    decidedAt: null,
    createdAt: Date.now(),
  });
  return callId;
}
