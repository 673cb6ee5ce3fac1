// What the mail tests share: the service with a relay, a customer's conversation with a reply, and reading what arrived.
import { afterEach } from "vitest";
import { issueTokens, ownerOf, send } from "../helpers/flows.js";
import { startServer, type TestServer } from "../helpers/server.js";
import { scaled } from "../helpers/time-scale.js";
import { freePort, type Received, type SmtpSink } from "./smtp-sink.js";

/** The settings of a service on `port` whose relay is on `smtpPort` (loopback), with short waits. */
export function mailEnv(port: number, smtpPort: number): Record<string, string> {
  return {
    AIAGENT_PORT: String(port),
    AIAGENT_SMTP_URL: `smtp://127.0.0.1:${smtpPort}`,
    AIAGENT_MAIL_FROM: "Support <support@shop.example>",
    AIAGENT_MAIL_LINK_BASE: `http://127.0.0.1:${port}`,
    AIAGENT_MAIL_OFFLINE_SECONDS: "5",
    AIAGENT_MAIL_LINK_TTL: "600",
    AIAGENT_MAIL_RETRY_DELAYS: "10,10",
    AIAGENT_MAIL_TIMEOUT_MS: String(scaled(5000)),
  };
}

/** The service on a port known in advance (the mails' links name it), with the relay on `smtpPort`. */
export async function startMailServer(smtpPort: number, env: Record<string, string> = {}): Promise<TestServer> {
  return await startServer({
    env: { ...mailEnv(await freePort(), smtpPort), ...env },
    overrides: { mailPollMs: 20 },
  });
}

/** A customer with an e-mail address writes; the agent answers; an operator replies later. */
export async function conversationWithReply(s: TestServer, email = "ann@customer.example", userId = "ann") {
  const a = await s.account();
  const t = await issueTokens(s.url, a, userId, { email });
  const sent = await send(s.url, t.access_token, "Where is my parcel?");
  await s.app.conversations.actions.reply(ownerOf(a), sent.conversation_id, "It ships tomorrow <b>morning</b>.");
  await s.app.offlineReplies!.idle();
  return { a, t, conversationId: sent.conversation_id };
}

/** Moves past the offline wait and sends what is due. */
export async function due(s: TestServer, ms = 6000) {
  s.clock.advance(ms);
  await s.app.mailSender!.drain();
}

export const operatorMail = (r: Received[]) => r.filter((m) => m.parsed.text?.includes("It ships tomorrow"));
/** A header as the message carries it (mailparser folds List-* headers into an object of its own). */
export const header = (m: Received, name: string) =>
  m.parsed.headerLines
    .find((h) => h.key === name)
    ?.line.slice(name.length + 1)
    .trim();
export const unsubscribeUrl = (m: Received) => /^<(.+)>$/.exec(header(m, "list-unsubscribe") ?? "")![1]!;
export const linkOf = (m: Received) => /https?:\/\/\S+\/mail\/open\/\S+/.exec(m.parsed.text ?? "")![0];

/** A test's service and relay, closed (and forgotten) after each test of the file that calls this. */
export function closedAfterEach(): { server?: TestServer; sink?: SmtpSink } {
  const live: { server?: TestServer; sink?: SmtpSink } = {};
  afterEach(async () => {
    await live.server?.close(true);
    await live.sink?.close();
    live.server = live.sink = undefined;
  });
  return live;
}
