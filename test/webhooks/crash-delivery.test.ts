import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { buildApp } from "../../src/app.js";
import { loadConfig } from "../../src/config.js";
import { createLogger } from "../../src/log.js";
import { aiagentCommand } from "../helpers/command.js";
import { idToken, issueTokens, ownerOf, send } from "../helpers/flows.js";
import { getJson } from "../helpers/http.js";
import { scaled } from "../helpers/time-scale.js";
import { eventually, WebhookReceiver } from "../helpers/webhook-receiver.js";

// `aiagent serve` as a child process, killed with SIGKILL while its deliveries are committed but not yet made
// (some in flight to a receiver that never answers, the rest waiting), then started again.
const dir = mkdtempSync(join(tmpdir(), "aiagent-hooks-crash-"));
const dbPath = join(dir, "aiagent.db");
const ENV = {
  AIAGENT_SECRETS: "a-test-secret-for-the-webhook-crash-test-0123",
  AIAGENT_WEBHOOK_TIMEOUT_MS: "300",
  AIAGENT_WEBHOOK_POLL_MS: "20",
  // Thirty quick retries: the attempts that time out while the receiver stalls never spend the schedule.
  AIAGENT_WEBHOOK_RETRY_DELAYS: Array.from({ length: 30 }, () => "0.05").join(","),
  AIAGENT_LOG_LEVEL: "info",
};
const receiver = new WebhookReceiver();
let child: ChildProcess | undefined;

afterAll(async () => {
  child?.kill("SIGKILL");
  await receiver.down();
  rmSync(dir, { recursive: true, force: true });
});

async function serve(): Promise<{ proc: ChildProcess; url: string; exited: Promise<void> }> {
  const proc = spawn(process.execPath, [...aiagentCommand(), "serve", "--db", dbPath, "--port", "0"], {
    env: { ...process.env, ...ENV, AIAGENT_DB: "" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  child = proc;
  const exited = new Promise<void>((r) => proc.once("exit", () => r()));
  const url = await new Promise<string>((resolve, reject) => {
    let buf = "";
    proc.stdout!.on("data", (c: Buffer) => {
      buf += c.toString();
      const m = /"msg":"listening","url":"([^"]+)"/.exec(buf);
      if (m) resolve(m[1]!);
    });
    proc.stderr!.on("data", (c: Buffer) => void (buf += c.toString()));
    proc.once("exit", () => reject(new Error(`server exited before listening: ${buf}`)));
  });
  return { proc, url, exited };
}

it(
  "SIGKILL between the commit and the delivery loses no event: the restarted service delivers every one",
  async () => {
    await receiver.up();
    receiver.stall = true;
    // The account, chatbot, key and endpoint are made before the server ever starts.
    const config = loadConfig({ ...ENV, AIAGENT_DB: dbPath, AIAGENT_PORT: "0", AIAGENT_LOG_LEVEL: "silent" });
    const app = await buildApp(config, createLogger("silent"), { dispatch: false });
    const email = "owner@hooks-crash.example";
    const made = await app.accounts.createAccount(email, "correct horse battery staple");
    const chatbot = await app.accounts.createChatbot(email, "bot", ["https://shop.example"], []);
    const key = await app.accounts.createApiKey(email);
    await app.webhooks.createEndpoint(ownerOf({ accountId: made.accountId, email }), {
      url: receiver.url,
      eventTypes: [],
      description: "",
    });
    await app.close();
    const acc = {
      accountId: made.accountId,
      email,
      password: "",
      apiKey: key.clientApiKey,
      chatbotId: chatbot.chatbotId,
    };

    const first = await serve();
    const t = await issueTokens(first.url, acc, "customer");
    let conv: string | undefined;
    for (let i = 0; i < 10; i++) conv = (await send(first.url, t.access_token, `message ${i}`, conv)).conversation_id;
    // Every change is acknowledged (committed); the first delivery is in flight to a receiver that does not answer.
    await eventually("a delivery in flight", () => receiver.stalled > 0);
    first.proc.kill("SIGKILL");
    await first.exited;
    const stalledAtKill = receiver.seen.length;

    receiver.stall = false;
    const second = await serve();
    const token = await idToken(second.url, acc);
    const log = await getJson(second.url, "/v1/account/events", { limit: 1000 }, { authorization: `Bearer ${token}` });
    const events = (log.body.data.events as { event_id: string }[]).map((e) => e.event_id);
    // One start, ten messages and ten answers.
    expect(events).toHaveLength(21);
    await eventually(
      "every event delivered after the restart",
      () => {
        const got = new Set(receiver.accepted().map((r) => r.event.event_id));
        return events.every((id) => got.has(id));
      },
      { tries: 800 },
    );
    const orders = receiver
      .accepted()
      .filter((r) => r.event.type === "message.created")
      .map((r) => r.event.data.message.message_order as number);
    expect(orders).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    // Every attempt that reached the receiver is counted, the one the kill cut included (counted before it was sent).
    const endpoints = await getJson(second.url, "/v1/account/webhooks", {}, { authorization: `Bearer ${token}` });
    const endpointId = endpoints.body.data.endpoints[0].endpoint_id as string;
    const listed = await getJson(
      second.url,
      `/v1/account/webhooks/${endpointId}/deliveries`,
      { limit: 100 },
      { authorization: `Bearer ${token}` },
    );
    const attempts = new Map<string, number>(
      (listed.body.data.deliveries as { event_id: string; attempts: number }[]).map((d) => [d.event_id, d.attempts]),
    );
    const reached = (id: string) => receiver.seen.filter((x) => x === id).length;
    const cut = receiver.seen[stalledAtKill - 1]!;
    expect(attempts.get(cut)).toBeGreaterThanOrEqual(reached(cut));
    // The cut attempt and the one after the restart that delivered it, at least.
    expect(reached(cut)).toBeGreaterThanOrEqual(2);
    for (const id of events) expect(attempts.get(id), id).toBeGreaterThanOrEqual(reached(id));
    second.proc.kill("SIGTERM");
    await second.exited;
  },
  scaled(60_000),
);
