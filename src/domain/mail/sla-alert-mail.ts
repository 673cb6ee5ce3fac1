import type { AlertSettings } from "../account/operator-profile.js";
import type { AccountRecord, ChatbotRecord, MemberRecord } from "../account/repository.js";
import type { SlaBreach } from "../conversation/timers.js";
import { newId } from "../ids.js";
import { isoTime } from "../time.js";
import { type Composed, escapeHtml } from "./mailer.js";
import { type MailRecord, pendingMail } from "./repository.js";

/** What an SLA alert carries in the outbox. */
interface SlaAlertData {
  conversationId: string;
  chatbotName: string;
  dueAt: number;
  /** Whom the conversation waits on: the holder's alert, or the admins' of an unassigned one. */
  held: boolean;
}

/** Who may get a breach's alert, and where they want it. */
export interface SlaAlertPeople {
  accounts: { byId(accountId: string): Promise<AccountRecord | undefined> };
  members: { listForAccount(accountId: string): Promise<MemberRecord[]> };
  chatbots: { byId(chatbotId: string): Promise<ChatbotRecord | undefined> };
  profiles: { alerts(accountId: string, email: string): Promise<AlertSettings> };
}

/**
 * Whom a breach alerts: the person who holds the conversation, or, while nobody does (the AI agent answers), the
 * account's admins (its owner and the admin members who joined); each only when they want the SLA alert by e-mail.
 */
export async function slaAlertRecipients(p: SlaAlertPeople, accountId: string, assignedTo: string): Promise<string[]> {
  let people: string[];
  if (assignedTo !== "ai_agent" && assignedTo !== "") people = [assignedTo.toLowerCase()];
  else {
    const [account, members] = await Promise.all([p.accounts.byId(accountId), p.members.listForAccount(accountId)]);
    people = [
      ...(account ? [account.email.toLowerCase()] : []),
      ...members.filter((m) => m.role === "admin" && m.joinedAt !== null).map((m) => m.email.toLowerCase()),
    ];
  }
  const wanted: string[] = [];
  for (const e of new Set(people)) if ((await p.profiles.alerts(accountId, e)).slaBreachEmail) wanted.push(e);
  return wanted;
}

/**
 * Queues a breach's alerts in the breach's unit of work (`outbox` is the unit's): one per person, once (the dedupe
 * key names the conversation and the person), never waiting for the relay.
 */
export async function queueSlaAlerts(
  d: SlaAlertPeople & { now(): number },
  outbox: { enqueue(m: MailRecord): Promise<boolean> },
  b: SlaBreach,
): Promise<void> {
  const c = b.conversation;
  const bot = await d.chatbots.byId(c.chatbotId);
  const held = c.assignedTo !== "ai_agent" && c.assignedTo !== "";
  const data: SlaAlertData = { conversationId: c.conversationId, chatbotName: bot?.name ?? "", dueAt: b.dueAt, held };
  const now = d.now();
  for (const recipient of await slaAlertRecipients(d, c.accountId, c.assignedTo))
    await outbox.enqueue(
      pendingMail({
        mailId: newId(),
        accountId: c.accountId,
        kind: "sla_alert",
        recipient,
        dedupeKey: `sla_alert:${c.conversationId}:${recipient}`,
        data: JSON.stringify(data),
        nextAttemptAt: now,
        createdAt: now,
      }),
    );
}

/** The SLA alert's mail: which chatbot, since when the reply was due, and the console's inbox. */
export function slaAlertMail(d: { consoleUrl: string }): (m: MailRecord) => Promise<Composed> {
  return async (m) => {
    const r = JSON.parse(m.data) as SlaAlertData;
    const url = `${d.consoleUrl}/inbox`;
    const bot = r.chatbotName ? ` (${r.chatbotName})` : "";
    const whose = r.held ? "A conversation you hold" : "An unassigned conversation";
    const line = `${whose}${bot} has had no reply from the team: its first response was due at ${isoTime(r.dueAt)}.`;
    return {
      subject: "A conversation missed its first-response time",
      text: `${line}\n\nOpen it in the console:\n${url}\n\nYou get this because SLA alerts are on in your profile.\n`,
      html:
        `<p>${escapeHtml(line)}</p><p><a href="${escapeHtml(url)}">Open the conversation</a></p>` +
        "<p>You get this because SLA alerts are on in your profile.</p>",
    };
  };
}
