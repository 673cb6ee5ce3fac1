import { hashSecret } from "../ids.js";
import { UNSUBSCRIBE_PREFIX } from "./mailer.js";
import type { MailRepository } from "./repository.js";

const TOKEN = /^us_[A-Za-z0-9_-]{16,128}$/;

/** Whether a string has the shape of an unsubscribe token (anything else is not looked up). */
export function isUnsubscribeToken(s: string): boolean {
  return s.startsWith(UNSUBSCRIBE_PREFIX) && TOKEN.test(s);
}

/**
 * One click on a mail's unsubscribe link (or the mail client's one-click POST, RFC 8058): its recipient gets no
 * more mail from the account that sent it, and what is pending for them is cancelled. False for an unknown token.
 */
export async function unsubscribe(
  outbox: Pick<MailRepository, "unsubscribe">,
  token: string,
  now: number,
): Promise<boolean> {
  if (!isUnsubscribeToken(token)) return false;
  return (await outbox.unsubscribe(hashSecret(token), now)) !== undefined;
}
