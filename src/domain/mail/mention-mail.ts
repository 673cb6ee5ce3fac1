import type { MentionAlertRepository, Mentionable } from "../conversation/mentions.js";
import type { NoteRecord } from "../conversation/repository.js";
import { type Composed, escapeHtml } from "./mailer.js";
import { type MailRecord, pendingMail } from "./repository.js";

/** What a mention mail carries in the outbox: the note's words as written then (the mail goes to the team only). */
interface MentionMailData {
  noteId: string;
  conversationId: string;
  authorName: string;
  content: string;
}

/** The most characters of the note a mention mail quotes. */
const QUOTED = 2000;

/**
 * Queues a mention's e-mail to each person mentioned who wants it (their Profile's choice; on by default), except
 * the note's own author; never waits for the relay. Each (note, person) is mailed once (its dedupe key).
 */
export async function queueMentionMails(
  d: {
    outbox: { enqueue(m: MailRecord): Promise<boolean> };
    alerts: Pick<MentionAlertRepository, "emailAlerts">;
    people: (accountId: string) => Promise<Mentionable[]>;
    now(): number;
    newId(): string;
    queued?: () => void;
  },
  note: NoteRecord,
  mentioned: Mentionable[],
): Promise<number> {
  const everyone = await d.people(note.accountId);
  const author = everyone.find((p) => p.email.toLowerCase() === note.authorEmail.toLowerCase());
  const data: MentionMailData = {
    noteId: note.noteId,
    conversationId: note.conversationId,
    authorName: author?.displayName || note.authorEmail,
    content: note.content.length > QUOTED ? `${note.content.slice(0, QUOTED)}…` : note.content,
  };
  let queued = 0;
  for (const p of mentioned) {
    if (p.email.toLowerCase() === note.authorEmail.toLowerCase()) continue;
    if (!(await d.alerts.emailAlerts(note.accountId, p.email))) continue;
    const now = d.now();
    const ok = await d.outbox.enqueue(
      pendingMail({
        mailId: d.newId(),
        accountId: note.accountId,
        kind: "mention",
        recipient: p.email.trim().toLowerCase(),
        dedupeKey: `mention:${note.noteId}:${p.memberId}`,
        data: JSON.stringify(data),
        nextAttemptAt: now,
        createdAt: now,
      }),
    );
    if (ok) queued++;
  }
  if (queued > 0) d.queued?.();
  return queued;
}

/** The mention's mail: who mentioned the person, the note's text, and a link to the conversation in the console. */
export function mentionMail(d: { consoleUrl: string }): (m: MailRecord) => Promise<Composed> {
  return async (m) => {
    const r = JSON.parse(m.data) as MentionMailData;
    const link = `${d.consoleUrl}/mentions`;
    const subject = `${r.authorName} mentioned you in a note`;
    const line = `${r.authorName} mentioned you in an internal note (the customer does not see it):`;
    return {
      subject,
      text: `${line}\n\n${r.content}\n\nOpen the conversation: ${link}\n`,
      html:
        `<p>${escapeHtml(line)}</p><blockquote style="white-space:pre-wrap;border-left:3px solid #ccc;margin:0;` +
        `padding:0 12px">${escapeHtml(r.content)}</blockquote><p><a href="${escapeHtml(link)}">Open the ` +
        "conversation</a></p>",
    };
  };
}
