import { type ParsedMail, simpleParser } from "mailparser";
import { SMTPServer } from "smtp-server";

/** A mail as the loopback SMTP server received it: the envelope, and the message parsed. */
export interface Received {
  to: string[];
  raw: string;
  parsed: ParsedMail;
}

/** A real SMTP server on 127.0.0.1 that keeps what it receives; it may refuse the next messages (a relay's 451). */
export interface SmtpSink {
  port: number;
  received: Received[];
  /** The next `n` messages are refused with 451 (try again later). */
  refuseNext(n: number): void;
  close(): Promise<void>;
}

/** A free port on 127.0.0.1 (nothing listens on it when this resolves). */
export { freePort } from "../helpers/ports.js";

export async function startSmtpSink(port = 0): Promise<SmtpSink> {
  const received: Received[] = [];
  let refuse = 0;
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS", "AUTH"],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on("data", (c: Buffer) => chunks.push(c));
      stream.on("end", () => {
        if (refuse > 0) {
          refuse--;
          return callback(Object.assign(new Error("try again later"), { responseCode: 451 }));
        }
        const raw = Buffer.concat(chunks).toString("utf8");
        void simpleParser(raw).then((parsed) => {
          received.push({ to: session.envelope.rcptTo.map((r) => r.address), raw, parsed });
          callback();
        }, callback);
      });
    },
  });
  await new Promise<void>((r) => server.listen(port, "127.0.0.1", () => r()));
  const address = server.server.address() as { port: number };
  return {
    port: address.port,
    received,
    refuseNext: (n) => void (refuse = n),
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
