import { newId } from "../ids.js";
import { recordActivity } from "./activity.js";
import type { ConversationServiceDeps } from "./conversation-core.js";
import type { NoteRecord } from "./repository.js";
import { AI_AGENT } from "./rules.js";

/**
 * Hands a conversation the AI agent answers over to the team, in one unit of work: it waits for a person (the agent
 * stays quiet until a person releases it; it stays in the inbox's Unassigned view, where no person holds it), and an
 * internal note says why, which the account's inbox stream and webhooks carry (`note.created`), and the conversation's
 * timeline has a `handed_over` line with the reason (`conversation.activity`).
 */
export async function handOver(
  d: Pick<ConversationServiceDeps, "clock" | "transaction" | "log" | "router">,
  accountId: string,
  conversationId: string,
  reason: string,
): Promise<NoteRecord> {
  const at = d.clock.now();
  const note = await d.transaction(async (tx) => {
    await tx.agents.setHandover({ conversationId, reason, at });
    const note: NoteRecord = {
      noteId: newId(),
      accountId,
      conversationId,
      authorEmail: AI_AGENT,
      content: `Handed over to the team by the AI agent: ${reason}.`,
      createdAt: at,
    };
    await tx.notes.add(note);
    await d.log.record(tx, accountId, [{ type: "note.created", data: { conversationId, note } }]);
    await recordActivity(tx, d.log, {
      accountId,
      conversationId,
      kind: "handed_over",
      actorEmail: "",
      actorName: "AI agent",
      fromEmail: AI_AGENT,
      fromName: "AI agent",
      toEmail: "",
      toName: "",
      detail: reason,
      createdAt: at,
    });
    return note;
  });
  // The team the chatbot is given may assign it to an available member (routing.ts), once the handover committed.
  const routing = d.router;
  routing?.soon(() => routing.route(accountId, conversationId));
  return note;
}
