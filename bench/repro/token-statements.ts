// `node --import tsx bench/repro/token-statements.ts [--issues 5000] [--lanes 16]`: the SQLite statements one
// get_access_token (S4) costs, counted in better-sqlite3 on a real server in this process, by statement (run, get, all,
// exec and prepare): the bench's 256 users, `--lanes` calls in flight. Everything the process ran while the calls
// were timed is counted, its timers included.
import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { postJson } from "../lib/post-json.js";

const { values: opt } = parseArgs({
  options: { issues: { type: "string", default: "5000" }, lanes: { type: "string", default: "16" } },
});
const ISSUES = Number(opt.issues);

const counts = new Map<string, number>();
let counting = false;
const count = (k: string) => {
  if (counting) counts.set(k, (counts.get(k) ?? 0) + 1);
};
const short = (sql: string) => sql.replace(/\s+/g, " ").trim().slice(0, 100);
const Database = createRequire(import.meta.url)("better-sqlite3");
const Statement = Object.getPrototypeOf(new Database(":memory:").prepare("SELECT 1"));
for (const m of ["run", "get", "all", "iterate"]) {
  const original = Statement[m];
  Statement[m] = function (this: { source: string }, ...args: unknown[]) {
    count(`${m} ${short(this.source)}`);
    return original.apply(this, args);
  };
}
for (const m of ["exec", "prepare"]) {
  const original = Database.prototype[m];
  Database.prototype[m] = function (this: unknown, sql: string, ...args: unknown[]) {
    count(`${m} ${short(sql)}`);
    return original.call(this, sql, ...args);
  };
}

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
  counting = true;
  const t0 = Date.now();
  await lanes(ISSUES);
  counting = false;
  console.log(`${ISSUES} issues in ${Date.now() - t0} ms`);
  let total = 0;
  for (const [k, c] of [...counts].sort((a, b) => b[1] - a[1])) {
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
