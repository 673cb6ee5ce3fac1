import { newId } from "../ids.js";
import { type Composed, escapeHtml } from "./mailer.js";
import { type MailRecord, pendingMail } from "./repository.js";

/** Seals a secret to one mail (KeySealer): the invitation's link is kept only sealed in the outbox. */
export interface MailSealer {
  seal(plaintext: string, boundTo: string): string;
  open(sealed: string, boundTo: string): string;
}

/** What an invitation mail carries in the outbox. */
interface InvitationMailData {
  /** The invitation's link, sealed to the mail's id. */
  linkSealed: string;
  /** A new person's invitation, or a member's new password link. */
  purpose: "invitation" | "password_reset";
  expiresAt: number;
  invitedBy: string;
}

/** An invitation (or a password reset link) as issued, to e-mail to the person. */
export interface IssuedLink {
  accountId: string;
  email: string;
  url: string;
  purpose: InvitationMailData["purpose"];
  expiresAt: number;
  invitedBy: string;
}

/**
 * Queues the mail of an invitation or a password reset link to the person it names, at once; never waits for the
 * relay (the outbox sends it). Each link issued is mailed once (its url is the dedupe key's source, hashed away).
 */
export function queueInvitation(
  d: {
    outbox: { enqueue(m: MailRecord): Promise<boolean> };
    sealer: MailSealer;
    now(): number;
    queued?: () => void;
  },
  link: IssuedLink,
): Promise<boolean> {
  const mailId = newId();
  const now = d.now();
  const data: InvitationMailData = {
    linkSealed: d.sealer.seal(link.url, mailId),
    purpose: link.purpose,
    expiresAt: link.expiresAt,
    invitedBy: link.invitedBy,
  };
  return d.outbox
    .enqueue(
      pendingMail({
        mailId,
        accountId: link.accountId,
        kind: "invitation",
        recipient: link.email.trim().toLowerCase(),
        dedupeKey: `invitation:${mailId}`,
        data: JSON.stringify(data),
        nextAttemptAt: now,
        createdAt: now,
      }),
    )
    .then((queued) => {
      if (queued) d.queued?.();
      return queued;
    });
}

/** The invitation's mail: who invited, the link, and until when it works. */
export function invitationMail(d: { sealer: MailSealer; now(): number }): (m: MailRecord) => Promise<Composed> {
  return async (m) => {
    const r = JSON.parse(m.data) as InvitationMailData;
    if (r.expiresAt <= d.now()) return { cancel: "the link expired before it could be sent" };
    const url = d.sealer.open(r.linkSealed, m.mailId);
    const until = new Date(r.expiresAt).toUTCString();
    const [subject, line] =
      r.purpose === "invitation"
        ? ["You are invited to the support team", `${r.invitedBy} invited you to answer customers with their team.`]
        : ["A new password for the support console", `${r.invitedBy} sent you a link to set a new password.`];
    return {
      subject,
      text: `${line}\n\nOpen this link to continue (it works until ${until}):\n${url}\n`,
      html:
        `<p>${escapeHtml(line)}</p><p><a href="${escapeHtml(url)}">Continue</a> ` +
        `(the link works until ${escapeHtml(until)}).</p>`,
    };
  };
}
