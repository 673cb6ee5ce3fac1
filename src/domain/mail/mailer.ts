import { hashSecret, newSecret } from "../ids.js";
import type { MailRecord, MailRepository } from "./repository.js";

/** A message as handed to the relay. */
export interface OutgoingMail {
  to: string;
  subject: string;
  text: string;
  html: string;
  headers: Record<string, string>;
}

/** Hands a message to the SMTP relay; rejects with a reason a person can act on. */
export interface MailTransport {
  send(m: OutgoingMail): Promise<void>;
}

/** What a kind of mail says, made at each attempt; `cancel` when it should not be sent any more (and why). */
export type Composed =
  | { subject: string; text: string; html: string; footer?: FooterWords | undefined }
  | { cancel: string };

/** The unsubscribe footer's words, in the recipient's language ("…: <link>" in text, "…, <a>link</a>." in HTML). */
export interface FooterWords {
  text: string;
  html: string;
  link: string;
}

const ENGLISH_FOOTER: FooterWords = {
  text: "To receive no more e-mail from us:",
  html: "To receive no more e-mail from us,",
  link: "unsubscribe",
};

/** Makes a queued mail's message, at each attempt. */
export type Composer = (m: MailRecord) => Promise<Composed>;

export interface MailSenderDeps {
  outbox: Pick<MailRepository, "claim" | "setUnsubscribeHash" | "markSent" | "markFailed" | "cancel">;
  transport: MailTransport;
  compose: Record<MailRecord["kind"], Composer>;
  now(): number;
  /** This service's public address: the unsubscribe links point there. */
  linkBase: string;
  /** Waits after each failed attempt; after the last, the mail has failed. */
  retryDelaysMs: readonly number[];
  /** How long one attempt may hold its mail before another sender may take it. */
  leaseMs: number;
  /** How often the outbox is looked at for due mails (a queued mail wakes the sender too). */
  pollMs: number;
  warn(what: string, fields: Record<string, unknown>): void;
}

/** Prefix of the unsubscribe tokens (a mail's own; only its hash is kept). */
export const UNSUBSCRIBE_PREFIX = "us_";
const BATCH = 10;

/**
 * Sends the outbox's due mails off the request path: each attempt makes the message afresh (its link and its
 * unsubscribe token), hands it to the relay, and records the outcome; a failure is tried again after the next wait
 * of `retryDelaysMs`, then given up (failed, with its reason kept for the account's people and the probe).
 */
export class MailSender {
  private timer: NodeJS.Timeout | undefined;
  /** The runs, one after another: this instance never sends the same due mail twice at once. */
  private tail: Promise<void> = Promise.resolve();
  private kicked = false;
  private closed = false;

  constructor(private readonly d: MailSenderDeps) {}

  start(): void {
    if (this.closed || this.timer) return;
    this.timer = setInterval(() => this.kick(), this.d.pollMs);
    this.timer.unref();
    this.kick();
  }

  /** Looks for due mails soon (a mail was queued, or the interval passed); one look is queued at most. */
  kick(): void {
    if (this.closed || this.kicked) return;
    this.kicked = true;
    void this.serial(() => {
      this.kicked = false;
      return this.sendDue();
    }).catch((e: unknown) => this.d.warn("mail: the outbox could not be read", { error: (e as Error).message }));
  }

  /** Sends what is due now, after any run under way, and resolves when done (tests). */
  drain(): Promise<void> {
    return this.serial(() => this.sendDue());
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.tail;
  }

  private serial(fn: () => Promise<void>): Promise<void> {
    const run = this.tail.then(fn);
    this.tail = run.catch(() => undefined);
    return run;
  }

  private async sendDue(): Promise<void> {
    for (;;) {
      const now = this.d.now();
      const due = await this.d.outbox.claim(now, now + this.d.leaseMs, BATCH);
      for (const m of due) await this.attempt(m);
      if (due.length < BATCH || this.closed) return;
    }
  }

  private async attempt(m: MailRecord): Promise<void> {
    let composed: Composed;
    try {
      composed = await this.d.compose[m.kind](m);
    } catch (e) {
      return this.failed(m, `the message could not be made: ${(e as Error).message}`);
    }
    if ("cancel" in composed) return this.d.outbox.cancel(m.mailId, composed.cancel, this.d.now());
    const token = newSecret(UNSUBSCRIBE_PREFIX);
    await this.d.outbox.setUnsubscribeHash(m.mailId, hashSecret(token));
    const unsubscribe = `${this.d.linkBase}/mail/unsubscribe/${token}`;
    const footer = composed.footer ?? ENGLISH_FOOTER;
    try {
      await this.d.transport.send({
        to: m.recipient,
        subject: composed.subject,
        text: `${composed.text}\n\n--\n${footer.text} ${unsubscribe}\n`,
        html:
          `${composed.html}<hr><p style="font-size:12px;color:#666">${escapeHtml(footer.html)} ` +
          `<a href="${unsubscribe}">${escapeHtml(footer.link)}</a>.</p>`,
        headers: {
          "List-Unsubscribe": `<${unsubscribe}>`,
          "List-Unsubscribe-Post": "List-Unsubscribe=One-Click",
          "Auto-Submitted": "auto-generated",
        },
      });
    } catch (e) {
      return this.failed(m, (e as Error).message || String(e));
    }
    await this.d.outbox.markSent(m.mailId, this.d.now());
  }

  private async failed(m: MailRecord, reason: string): Promise<void> {
    const wait = this.d.retryDelaysMs[m.attempts - 1];
    const now = this.d.now();
    const error = reason.slice(0, 500);
    await this.d.outbox.markFailed(m.mailId, error, now, wait === undefined ? null : now + wait);
    this.d.warn(wait === undefined ? "mail: failed for good" : "mail: attempt failed, tried again later", {
      mail_id: m.mailId,
      account_id: m.accountId,
      kind: m.kind,
      attempts: m.attempts,
      error,
    });
  }
}

/** Text made safe inside HTML. */
export function escapeHtml(s: string): string {
  return s.replace(
    /[&<>"']/g,
    (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c] as string,
  );
}
