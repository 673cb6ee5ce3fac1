// `node --import tsx bench/repro/token-statements.ts [--issues 5000] [--lanes 16]`: the SQLite statements one
// get_access_token (S4) costs, counted in better-sqlite3 on a real server in this process, by statement (run, get, all,
// exec and prepare): the bench's 256 users, `--lanes` calls in flight. Everything the process ran while the calls
// were timed is counted, its timers included.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { postJson } from "../lib/post-json.js";
import { statementCounts } from "../lib/statement-counts.js";

const { values: opt } = parseArgs({
  options: { issues: { type: "string", default: "5000" }, lanes: { type: "string", default: "16" } },
});
const ISSUES = Number(opt.issues);

const stats = statementCounts();

const { buildApp } = await import("../../src/app.js");
const { loadConfig } = await import("../../src/config.js");
const { createLogger } = await import("../../src/log.js");
const dir = mkdtempSync(join(tmpdir(), "aiagent-token-statements-"));
const config = loadConfig({
  AIAGENT_DB: join(dir, "aiagent.db"),
  AIAGENT_PORT: "0",
  AIAGENT_HOST: "127.0.0.1",
  AIAGENT_LOG_LEVEL: "error",
  AIAGENT_RATE_LIMIT: "off",
  AIAGENT_SECRETS: process.env.AIAGENT_SECRETS ?? "bench-only-key-encryption-secret-0123456789",
});
const app = await buildApp(
  config,
  createLogger("error", () => undefined),
  {},
);
const server = await app.listen();
try {
  const email = "statements@example.com";
  await app.accounts.createAccount(email, "correct horse battery staple");
  const chatbot = await app.accounts.createChatbot(email, "Shop", ["https://shop.example"], []);
  const key = await app.accounts.createApiKey(email);
  let n = 0;
  const issue = () =>
    postJson(server.url, "/ai_agent/get_access_token", {
      user_id: `ab_${(n++ % 256).toString(36)}`,
      chatbot_id: chatbot.chatbotId,
      client_api_key: key.clientApiKey,
    });
  const lanes = async (total: number) => {
    let left = total;
    await Promise.all(
      Array.from({ length: Number(opt.lanes) }, async () => {
        while (left-- > 0) await issue();
      }),
    );
  };
  await lanes(1000);
  stats.counting = true;
  const t0 = Date.now();
  await lanes(ISSUES);
  stats.counting = false;
  console.log(`${ISSUES} issues in ${Date.now() - t0} ms`);
  let total = 0;
  for (const [k, c] of [...stats.counts].sort((a, b) => b[1] - a[1])) {
    total += c;
    console.log(`${(c / ISSUES).toFixed(3).padStart(7)}  ${k}`);
  }
  console.log(`${(total / ISSUES).toFixed(2)} statements per issue`);
} finally {
  await server.close(100);
  await app.close();
  rmSync(dir, { recursive: true, force: true });
}
process.exit(0);
