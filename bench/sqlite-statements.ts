// `node --import tsx bench/sqlite-statements.ts [--streams 8] [--sends 50]`: the SQLite statements one frame
// send_message costs (with the built-in agent: the customer's message and the agent's reply) while `--streams` watch
// streams follow its conversation, counted in better-sqlite3 on a real server, by statement: a number the machine's
// load cannot blur, unlike the CPU per event of `npm run bench:live`. Every delivery is checked to have arrived.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { postJson } from "./lib/post-json.js";
import { statementCounts } from "./lib/statement-counts.js";

const { values: opt } = parseArgs({
  options: { streams: { type: "string", default: "8" }, sends: { type: "string", default: "50" } },
});
const STREAMS = Number(opt.streams);
const SENDS = Number(opt.sends);

// Counted from the first timed send to the last delivery: every statement run, every exec, every statement prepared.
const stats = statementCounts();

const { buildApp } = await import("../src/app.js");
const { loadConfig } = await import("../src/config.js");
const { createLogger } = await import("../src/log.js");
const { frameRoutes } = await import("../src/frame/routes.js");
const dir = mkdtempSync(join(tmpdir(), "aiagent-statements-"));
const config = loadConfig({
  AIAGENT_DB: join(dir, "aiagent.db"),
  AIAGENT_PORT: "0",
  AIAGENT_LOG_LEVEL: "error",
  AIAGENT_SECRETS: process.env.AIAGENT_SECRETS ?? "bench-only-key-encryption-secret-0123456789",
  AIAGENT_RATE_LIMIT_MESSAGES_PER_MINUTE: "0",
});
const app = await buildApp(
  config,
  createLogger("error", () => undefined),
  { extraRoutes: frameRoutes },
);
const server = await app.listen();
const streams: AbortController[] = [];
try {
  const email = "statements@example.com";
  await app.accounts.createAccount(email, "correct horse battery staple");
  const knowledge = [{ title: "Shipping", url: "https://shop.example/ship", snippet: "We ship to Canada in 5 days." }];
  const chatbot = await app.accounts.createChatbot(email, "Shop", ["https://shop.example"], knowledge);
  const key = await app.accounts.createApiKey(email);
  const post = (path: string, body: unknown) => postJson(server.url, path, body);
  // Four streams per token at most (the default cap per token): a token for every four.
  const tokens: string[] = [];
  for (let i = 0; i < Math.max(1, Math.ceil(STREAMS / 4)); i++)
    tokens.push(
      (
        await post("/ai_agent/get_access_token", {
          user_id: "customer-1",
          chatbot_id: chatbot.chatbotId,
          client_api_key: key.clientApiKey,
        })
      ).data.access_token as string,
    );
  const token = tokens[0]!;
  const conv = (await post(`/ai_agent/send_message?access_token=${token}`, { content: "Hello" })).data
    .conversation_id as string;
  let delivered = 0;
  for (let i = 0; i < STREAMS; i++) {
    const c = new AbortController();
    streams.push(c);
    const r = await fetch(
      `${server.url}/watch_conversation?conversation_id=${conv}&after_message_order=2&access_token=${tokens[Math.floor(i / 4)]}`,
      { signal: c.signal },
    );
    if (r.status !== 200) throw new Error(`stream ${i}: ${r.status} ${await r.text()}`);
    void (async () => {
      const decoder = new TextDecoder();
      for await (const chunk of r.body!) delivered += decoder.decode(chunk).split('"message_id"').length - 1;
    })().catch(() => undefined);
  }
  await new Promise((r) => setTimeout(r, 300));
  stats.counting = true;
  for (let i = 0; i < SENDS; i++)
    await post(`/ai_agent/send_message?access_token=${token}`, {
      conversation_id: conv,
      content: "Do you ship to Canada, and how long does it take?",
    });
  const end = Date.now() + 10_000;
  while (delivered < SENDS * 2 * STREAMS && Date.now() < end) await new Promise((r) => setTimeout(r, 10));
  await new Promise((r) => setTimeout(r, 200));
  stats.counting = false;
  console.log(`${SENDS} sends, ${STREAMS} streams: ${delivered} of ${SENDS * 2 * STREAMS} deliveries arrived`);
  let total = 0;
  for (const [k, n] of [...stats.counts].sort((a, b) => b[1] - a[1])) {
    total += n;
    console.log(`${(n / SENDS).toFixed(2).padStart(6)}  ${k}`);
  }
  console.log(`${(total / SENDS).toFixed(1)} statements per send`);
} finally {
  for (const c of streams) c.abort();
  await server.close(100);
  await app.close();
  rmSync(dir, { recursive: true, force: true });
}
process.exit(0);
