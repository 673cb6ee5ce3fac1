import type { ChatbotRecord } from "../account/repository.js";
import type { ConversationRecord } from "../conversation/repository.js";
import { type Composed, escapeHtml } from "./mailer.js";
import type { ReplyMailData } from "./offline-replies.js";
import type { MailRecord } from "./repository.js";

export interface ReplyMailDeps {
  conversations: { byId(conversationId: string): Promise<ConversationRecord | undefined> };
  chatbots: { byId(chatbotId: string): Promise<ChatbotRecord | undefined> };
  presence: { seenSince(conversationId: string, since: number): boolean };
  links: { issue(who: { accountId: string; chatbotId: string; userId: string }): Promise<string> };
  /** This service's public address (the page that opens the conversation is there). */
  linkBase: string;
}

/** The longest reply quoted in a mail (the rest is behind the link). */
const MAX_QUOTED = 20_000;

/**
 * The mail of a reply to a customer who was away: the reply, and a link that opens the conversation again (a
 * launch code made now, valid once). Not sent when the customer came back meanwhile, or the conversation is gone.
 */
export function replyMail(d: ReplyMailDeps): (m: MailRecord) => Promise<Composed> {
  return async (m) => {
    const r = JSON.parse(m.data) as ReplyMailData;
    if (d.presence.seenSince(r.conversationId, r.writtenAt)) return { cancel: "the customer came back and read it" };
    const conv = await d.conversations.byId(r.conversationId);
    if (!conv || conv.accountId !== m.accountId) return { cancel: "the conversation is gone" };
    const chatbot = await d.chatbots.byId(conv.chatbotId);
    if (!chatbot?.active || chatbot.accountId !== m.accountId) return { cancel: "the chatbot is gone" };
    const code = await d.links.issue({ accountId: m.accountId, chatbotId: conv.chatbotId, userId: conv.userId });
    const link = `${d.linkBase}/mail/open/${conv.chatbotId}?launch=${encodeURIComponent(code)}`;
    const quoted = r.content.length > MAX_QUOTED ? `${r.content.slice(0, MAX_QUOTED)}…` : r.content;
    const who = r.role === "operator" && conv.operatorName ? conv.operatorName : chatbot.name;
    return {
      subject: `New reply from ${chatbot.name}`,
      text: `${who} replied:\n\n${quoted}\n\nOpen the conversation (the link works once): ${link}\n`,
      html:
        `<p>${escapeHtml(who)} replied:</p>` +
        `<blockquote style="white-space:pre-wrap">${escapeHtml(quoted)}</blockquote>` +
        `<p><a href="${escapeHtml(link)}">Open the conversation</a> (the link works once).</p>`,
    };
  };
}
