import type { Mentions } from "../../domain/conversation/mentions.js";
import { isoTime } from "../../domain/time.js";
import { accountCaller } from "../auth.js";
import type { AuthorizedCall } from "../call.js";

/** The AccountService's mention methods: each person's own mentions and alerts (the gate admits every person). */
export function mentionHandlers(mentions: Mentions) {
  return {
    async listMentionablePeople(_req: unknown, call: AuthorizedCall) {
      const people = await mentions.people(accountCaller(call.auth));
      return {
        data: { people: people.map((p) => ({ memberId: p.memberId, displayName: p.displayName, email: p.email })) },
      };
    },
    async listMyMentions(req: { limit?: number | undefined }, call: AuthorizedCall) {
      const r = await mentions.list(accountCaller(call.auth), req.limit);
      return {
        data: {
          mentions: r.mentions.map((m) => ({
            noteId: m.noteId,
            conversationId: m.conversationId,
            authorEmail: m.authorEmail,
            authorName: m.authorName,
            content: m.content,
            createdAt: isoTime(m.createdAt),
            read: m.readAt !== null,
          })),
          unread: r.unread,
          emailAlerts: r.emailAlerts,
        },
      };
    },
    async markMentionsRead(req: { noteIds: string[] }, call: AuthorizedCall) {
      return { data: { marked: await mentions.markRead(accountCaller(call.auth), req.noteIds) } };
    },
    async setMentionAlerts(req: { emailAlerts: boolean }, call: AuthorizedCall) {
      return { data: { emailAlerts: await mentions.setEmailAlerts(accountCaller(call.auth), req.emailAlerts) } };
    },
  };
}
