import type { RateLimiterAbstract } from "rate-limiter-flexible";
import { peopleOf } from "../domain/conversation/mentions.js";
import type { MentionAlert } from "../domain/conversation/notes.js";
import { newId } from "../domain/ids.js";
import type { AccountLogs } from "../domain/log/account-logs.js";
import { type IssuedLink, invitationMail, queueInvitation } from "../domain/mail/invitation-mail.js";
import { MailLaunchLinks } from "../domain/mail/launch-links.js";
import { MailDesk } from "../domain/mail/mail-desk.js";
import { MailSender, type MailTransport } from "../domain/mail/mailer.js";
import { mentionMail, queueMentionMails } from "../domain/mail/mention-mail.js";
import { OfflineReplies } from "../domain/mail/offline-replies.js";
import { CustomerPresence } from "../domain/mail/presence.js";
import { replyMail } from "../domain/mail/reply-mail.js";
import { slaAlertMail } from "../domain/mail/sla-alert-mail.js";
import { transcriptMail } from "../domain/mail/transcript-mail.js";
import { unsubscribe } from "../domain/mail/unsubscribe.js";
import type { KeySealer } from "../domain/token/key-sealer.js";
import { mailRoutes } from "../mail/routes.js";
import { smtpTransport } from "../mail/smtp.js";
import type { PageRoute } from "../protocol/http/pages.js";
import { type LimitRule, limiterCounter, unlimited } from "../protocol/rate-limit.js";
import { type Base, warnOn } from "./base.js";

export interface MailParts {
  /** Which conversations customers have open (the frame's watch streams enter it). */
  presence: CustomerPresence;
  /** Undefined without a relay (AIAGENT_SMTP_URL unset): nothing is queued or sent. */
  mailSender: MailSender | undefined;
  offlineReplies: OfflineReplies | undefined;
  mailRoutes: PageRoute[];
  /** Queues the mails of a note's mentions; undefined without a relay. */
  mentionMails: MentionAlert | undefined;
  /** Queues the mail of an invitation or password link; undefined without a relay (the link is only answered). */
  mailLink: ((link: IssuedLink) => Promise<void>) | undefined;
  /** The customer's address, transcripts and the account's outbox (MailService). */
  mailDesk: MailDesk;
  /** What /readyz says of e-mail. */
  mailStatus: () => Promise<Record<string, unknown>>;
  /** Starts following the logs and sending (with the server). */
  startMail: () => Promise<void>;
  stopMail: () => Promise<void>;
}

export interface MailDeps {
  /** The instance's shared readers of the accounts' logs (the offline-reply follower is one of their followers). */
  logs: AccountLogs;
  /** Seals the invitations' links in the outbox. */
  sealer: KeySealer;
  /** How mails reach the relay (a test may swap in its own); SMTP through the SSRF guard by default. */
  transport?: MailTransport | undefined;
  /** How often the outbox is looked at (ms); default 1000. */
  pollMs?: number | undefined;
  /** The back end's counters of a limit rule (transcripts per conversation). */
  rateLimiter: (rule: LimitRule) => RateLimiterAbstract;
}

/** E-mail: the outbox's sender, the follower of replies to customers who are away, and the mails' pages. */
export function composeMail(b: Base, d: MailDeps): MailParts {
  const { config, store, clock, log } = b;
  const presence = new CustomerPresence(() => clock.now());
  const settings = config.mail;
  const routes = mailRoutes({ unsubscribe: (token) => unsubscribe(store.mail, token, clock.now()) });
  const contact = (accountId: string, userId: string) => store.privacy.contact(accountId, { userId });
  const perHour = settings?.transcriptsPerHour ?? 0;
  const rule = { name: "mail-transcript", points: perHour, durationS: 3600, blockS: 0 };
  let kick: (() => void) | undefined;
  const mailDesk = new MailDesk({
    contacts: store.contacts,
    contact,
    conversations: store.conversations,
    outbox: store.mail,
    transcripts: perHour > 0 ? limiterCounter(d.rateLimiter(rule), rule) : unlimited,
    transcriptsPerHour: perHour,
    relay: settings !== undefined,
    now: () => clock.now(),
    queued: () => kick?.(),
  });
  if (!settings) {
    return {
      presence,
      mailDesk,
      mailSender: undefined,
      offlineReplies: undefined,
      mailLink: undefined,
      mentionMails: undefined,
      mailRoutes: routes,
      mailStatus: async () => ({ relay: "not configured" }),
      startMail: async () => undefined,
      stopMail: async () => undefined,
    };
  }
  const links = new MailLaunchLinks({
    transaction: b.transaction,
    now: () => clock.now(),
    ttlMs: settings.linkTtlMs,
    origin: new URL(settings.linkBase).origin,
  });
  const sender = new MailSender({
    outbox: store.mail,
    transport: d.transport ?? smtpTransport(settings),
    compose: {
      reply: replyMail({ ...store, presence, links, linkBase: settings.linkBase }),
      invitation: invitationMail({ sealer: d.sealer, now: () => clock.now() }),
      transcript: transcriptMail({ ...store, contact }),
      mention: mentionMail({ consoleUrl: `${settings.linkBase.replace(/\/+$/, "")}/console` }),
      sla_alert: slaAlertMail({ consoleUrl: `${settings.linkBase.replace(/\/+$/, "")}/console` }),
    },
    now: () => clock.now(),
    linkBase: settings.linkBase,
    retryDelaysMs: settings.retryDelaysMs,
    leaseMs: settings.timeoutMs * 2,
    pollMs: d.pollMs ?? 1000,
    warn: (what, fields) => log.warn(what, fields),
  });
  const offline = new OfflineReplies({
    logs: d.logs,
    history: store.events,
    conversations: store.conversations,
    contact,
    outbox: store.mail,
    presence,
    now: () => clock.now(),
    offlineMs: settings.offlineMs,
    queued: () => sender.kick(),
    warn: (what, e) => warnOn(log, what)(e),
  });
  kick = () => sender.kick();
  const mentionable = peopleOf(store);
  const forget = setInterval(() => presence.forget(clock.now() - settings.offlineMs * 2), 60_000);
  forget.unref();
  return {
    presence,
    mailSender: sender,
    offlineReplies: offline,
    mailDesk,
    // A link that could not be queued is still answered (the admin can pass it on): the failure is logged.
    mailLink: (link) =>
      queueInvitation(
        { outbox: store.mail, sealer: d.sealer, now: () => clock.now(), queued: () => sender.kick() },
        link,
      ).then(() => undefined, warnOn(log, "mail: an invitation could not be queued")),
    // A mention mail that could not be queued never fails the note: the failure is logged.
    mentionMails: (note, people) =>
      queueMentionMails(
        {
          outbox: store.mail,
          alerts: store.mentionAlerts,
          people: mentionable,
          now: () => clock.now(),
          newId,
          queued: () => sender.kick(),
        },
        note,
        people,
      ).then(() => undefined, warnOn(log, "mail: a mention could not be queued")),
    mailRoutes: routes,
    mailStatus: async () => {
      const c = await store.mail.counts(undefined);
      return { relay: "configured", pending: c.pending, failed: c.failed, last_failure_at: c.lastErrorAt };
    },
    startMail: async () => {
      offline.start();
      sender.start();
    },
    stopMail: async () => {
      clearInterval(forget);
      offline.stop();
      await sender.close();
      await offline.idle();
    },
  };
}
