import { isIP } from "node:net";
import { createTransport } from "nodemailer";
import type { MailSettings } from "../config.js";
import type { MailTransport, OutgoingMail } from "../domain/mail/mailer.js";
import { isPublicAddress } from "../webhooks/addresses.js";
import { guardedLookup } from "../webhooks/http-sender.js";

/** The largest message handed to the relay (the mails this service writes are far smaller). */
export const MAX_MAIL_BYTES = 512 * 1024;
/** The largest single answer of the relay read. */
const MAX_RESPONSE_BYTES = 64 * 1024;

/**
 * The relay's address through the SSRF guard: a name is resolved here, by the guarded lookup, and the connection
 * goes to the address it answered (so a name cannot be turned to another address between check and connection).
 * Only public addresses, unless the operator allowed a loopback or private relay (MailSettings.allowPrivate).
 */
function relayAddress(host: string, allowPrivate: boolean): Promise<string> {
  const bare = host.replace(/^\[|\]$/g, "");
  if (isIP(bare)) {
    if (!allowPrivate && !isPublicAddress(bare))
      return Promise.reject(
        new Error(`the relay ${bare} is not a public address (set AIAGENT_SMTP_ALLOW_PRIVATE=true to allow it)`),
      );
    return Promise.resolve(bare);
  }
  const lookup = guardedLookup(allowPrivate);
  return new Promise((resolve, reject) =>
    lookup(bare, { family: 0 }, (err, address) => {
      if (err) {
        const code = (err as NodeJS.ErrnoException).code;
        reject(
          new Error(
            code === "EADDRNOTPUBLIC"
              ? `${err.message} (set AIAGENT_SMTP_ALLOW_PRIVATE=true to allow it)`
              : `the relay ${bare} could not be resolved (${code ?? err.message})`,
          ),
        );
      } else resolve(address as string);
    }),
  );
}

/** Sends through the configured SMTP relay, one connection per message, bounded in time and size. */
export function smtpTransport(s: MailSettings): MailTransport {
  const url = new URL(s.smtpUrl);
  const secure = url.protocol === "smtps:";
  const port = url.port ? Number(url.port) : secure ? 465 : 587;
  const auth = url.username
    ? { user: decodeURIComponent(url.username), pass: decodeURIComponent(url.password) }
    : undefined;
  return {
    async send(m: OutgoingMail) {
      const size = Buffer.byteLength(m.text) + Buffer.byteLength(m.html);
      if (size > MAX_MAIL_BYTES) throw new Error(`the message is larger than ${MAX_MAIL_BYTES} bytes`);
      const address = await relayAddress(url.hostname, s.allowPrivate);
      const transport = createTransport({
        host: address,
        port,
        secure,
        ...(auth ? { auth } : {}),
        tls: { servername: isIP(url.hostname.replace(/^\[|\]$/g, "")) ? undefined : url.hostname },
        connectionTimeout: s.timeoutMs,
        greetingTimeout: s.timeoutMs,
        socketTimeout: s.timeoutMs,
        dnsTimeout: s.timeoutMs,
        maxResponseSize: MAX_RESPONSE_BYTES,
        socketCloseTimeout: 0,
      });
      let timer: NodeJS.Timeout | undefined;
      try {
        await Promise.race([
          transport.sendMail({
            from: s.from,
            to: m.to,
            subject: m.subject,
            text: m.text,
            html: m.html,
            headers: m.headers,
          }),
          new Promise((_, reject) => {
            timer = setTimeout(
              () => reject(new Error(`the relay did not answer within ${s.timeoutMs} ms`)),
              s.timeoutMs,
            );
          }),
        ]);
      } catch (e) {
        const err = e as Error & { responseCode?: number; response?: string; code?: string };
        // The relay's own answer (no credential in it), else the connection's error.
        throw new Error(
          err.responseCode
            ? `the relay refused: ${String(err.response ?? err.responseCode).slice(0, 300)}`
            : `the relay could not be reached (${err.code ?? err.message})`,
        );
      } finally {
        clearTimeout(timer);
        transport.close();
      }
    },
  };
}
