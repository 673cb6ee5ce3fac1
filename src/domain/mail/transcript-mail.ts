import type { ChatbotRecord } from "../account/repository.js";
import type { ActivityRecord, ConversationRecord, ConversationRef, MessageRecord } from "../conversation/repository.js";
import type { ContactRecord } from "../privacy/repository.js";
import type { TranscriptMailData } from "./mail-desk.js";
import { type Composed, escapeHtml } from "./mailer.js";
import type { MailRecord } from "./repository.js";

export interface TranscriptMailDeps {
  conversations: {
    byId(conversationId: string): Promise<ConversationRecord | undefined>;
    messages(
      conv: ConversationRef,
      limit: number,
      offset: number,
    ): Promise<{ messages: MessageRecord[]; hasMore: boolean }>;
  };
  chatbots: { byId(chatbotId: string): Promise<ChatbotRecord | undefined> };
  activities: { forConversation(conversationId: string, limit: number): Promise<ActivityRecord[]> };
  contact(accountId: string, userId: string): Promise<ContactRecord | undefined>;
}

const PAGE = 200;
/** The most messages a transcript holds (the newest are kept when a conversation is longer). */
const MAX_MESSAGES = 2000;
/** The most characters of messages a transcript quotes (the message is bounded by the relay's size cap). */
const MAX_CHARS = 150_000;

/** Who wrote a message, by name: the customer, the agent (its appearance's name), or the person who held it then. */
function authors(chatbot: ChatbotRecord, contact: ContactRecord | undefined, activity: ActivityRecord[]) {
  const agent = chatbot.appearance.agentName || chatbot.name;
  const customer = contact?.contactName || "You";
  // Who held the conversation at an instant, from its timeline (taken over, assigned, released).
  const holders = activity
    .filter((a) => a.kind === "taken_over" || a.kind === "assigned" || a.kind === "released")
    .map((a) => ({ at: a.createdAt, name: a.kind === "released" || a.toEmail === "ai_agent" ? "" : a.toName }));
  const operatorAt = (at: number) => {
    let name = "";
    for (const h of holders) if (h.at <= at) name = h.name;
    return name || "Support team";
  };
  return (m: MessageRecord) => (m.role === "user" ? customer : m.role === "operator" ? operatorAt(m.createdAt) : agent);
}

/**
 * The mail of a transcript: every message of the conversation (never the team's internal notes, which live apart
 * from messages), each with its author's name and its time (Intl, in the team's time zone when office hours name
 * one, else UTC). Made when it is sent, so it holds the conversation as it then stands.
 */
export function transcriptMail(d: TranscriptMailDeps): (m: MailRecord) => Promise<Composed> {
  return async (m) => {
    const r = JSON.parse(m.data) as TranscriptMailData;
    const conv = await d.conversations.byId(r.conversationId);
    if (!conv || conv.accountId !== m.accountId) return { cancel: "the conversation is gone" };
    const chatbot = await d.chatbots.byId(conv.chatbotId);
    if (!chatbot || chatbot.accountId !== m.accountId) return { cancel: "the chatbot is gone" };
    const messages: MessageRecord[] = [];
    for (let offset = 0; ; offset += PAGE) {
      const page = await d.conversations.messages(conv, PAGE, offset);
      messages.push(...page.messages);
      if (!page.hasMore || page.messages.length === 0) break;
    }
    let kept = messages.slice(-MAX_MESSAGES);
    let chars = 0;
    for (let i = kept.length - 1; i >= 0; i--) {
      chars += kept[i]!.content.length;
      if (chars > MAX_CHARS) {
        kept = kept.slice(i + 1);
        break;
      }
    }
    const omitted = messages.length - kept.length;
    const who = authors(
      chatbot,
      await d.contact(m.accountId, conv.userId),
      await d.activities.forConversation(conv.conversationId, 1000),
    );
    const timeZone = chatbot.appearance.officeHours?.timeZone || "UTC";
    const when = new Intl.DateTimeFormat("en", {
      dateStyle: "medium",
      timeStyle: "short",
      timeZone,
    });
    const at = (t: number) => `${when.format(new Date(t))} (${timeZone})`;
    const intro = `Your conversation with ${chatbot.name}, started ${at(conv.createdAt)}.`;
    const skipped = omitted > 0 ? `(${omitted} earlier messages are not included.)` : "";
    const text =
      `${intro}\n${skipped ? `${skipped}\n` : ""}\n` +
      kept.map((x) => `${who(x)} · ${at(x.createdAt)}\n${x.content}\n`).join("\n");
    const html =
      `<p>${escapeHtml(intro)}</p>${skipped ? `<p>${escapeHtml(skipped)}</p>` : ""}` +
      kept
        .map(
          (x) =>
            `<div style="margin:0 0 12px"><div style="font-size:12px;color:#555"><strong>${escapeHtml(who(x))}</strong>` +
            ` · ${escapeHtml(at(x.createdAt))}</div><div style="white-space:pre-wrap">${escapeHtml(x.content)}</div></div>`,
        )
        .join("");
    return { subject: `Your conversation with ${chatbot.name}`, text, html };
  };
}
