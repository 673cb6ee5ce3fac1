import { ConversationTimers } from "../domain/conversation/timers.js";
import type { EventLog } from "../domain/log/event-log.js";
import type { MailSender } from "../domain/mail/mailer.js";
import { queueSlaAlerts } from "../domain/mail/sla-alert-mail.js";
import type { Repositories } from "../domain/store.js";
import type { Base } from "./base.js";

export interface TimerParts {
  /** Snoozes and first-response SLA clocks, and the periodic check that wakes and settles them. */
  timers: ConversationTimers<Repositories>;
  /** Starts the periodic check (with the server). */
  startTimers: () => void;
  stopTimers: () => Promise<void>;
}

/**
 * The conversations' timers: a breach's alert e-mails are queued in its unit of work when a relay is configured
 * (compose/mail.ts), and the sender looks at once after it commits.
 */
export function composeTimers(b: Base, d: { eventLog: EventLog; mailSender: MailSender | undefined }): TimerParts {
  const { config, store, clock, log } = b;
  const people = { ...store, now: () => clock.now() };
  const timers = new ConversationTimers<Repositories>({
    clock,
    log: d.eventLog,
    transaction: b.transaction,
    timers: store.timers,
    conversations: store.conversations,
    nameOf: async (accountId, email) => (await store.profiles.get(accountId, email))?.displayName ?? "",
    pollMs: config.timerCheckMs,
    ...(d.mailSender
      ? {
          onBreach: (tx: Repositories, breach) => queueSlaAlerts(people, tx.mail, breach),
          afterBreach: () => d.mailSender?.kick(),
        }
      : {}),
    warn: (what, fields) => log.warn(what, fields),
  });
  return { timers, startTimers: () => timers.start(), stopTimers: () => timers.close() };
}
