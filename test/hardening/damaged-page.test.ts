import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, expect, it } from "vitest";
import { issueTokens, send } from "../helpers/flows.js";
import { getJson } from "../helpers/http.js";
import { NO_CUSTOMER_LIMITS, startServer, type TestServer } from "../helpers/server.js";
import { expectNoSecrets } from "./support.js";

// README: a file damaged beyond its header is found when the damaged page is read (that request fails, and is
// logged), not at start. A real file, a real page overwritten on disk, a real server over it.
const dir = mkdtempSync(join(tmpdir(), "aiagent-damaged-"));
const secrets = new Set<string>();
let s: TestServer | undefined;
afterAll(async () => {
  await s?.close();
  rmSync(dir, { recursive: true, force: true });
});

it("a damaged data page: the service starts, the request that reads it fails (5xx, logged), everything else is served", async () => {
  s = await startServer({ dir, env: NO_CUSTOMER_LIMITS });
  const a = await s.account();
  secrets.add(a.apiKey).add(a.password);
  const small = await issueTokens(s.url, a, "untouched");
  const big = await issueTokens(s.url, a, "damaged");
  secrets.add(small.access_token).add(small.refresh_token).add(big.access_token).add(big.refresh_token);
  // Written first, so its rows sit on the first pages of the messages table.
  const smallConv = (await send(s.url, small.access_token, "on an early page")).conversation_id;
  let bigConv: string | undefined;
  for (let i = 0; i < 40; i++)
    bigConv = (await send(s.url, big.access_token, `${i} ${"long message ".repeat(300)}`, bigConv)).conversation_id;
  await s.close();
  s = undefined;

  // A leaf page of the messages table from the second half (the big conversation's rows), overwritten with garbage.
  const dbPath = join(dir, "aiagent.db");
  const db = new Database(dbPath);
  const pageSize = db.pragma("page_size", { simple: true }) as number;
  const leaves = db
    .prepare<[], { pageno: number }>(
      "SELECT pageno FROM dbstat WHERE name = 'messages' AND pagetype = 'leaf' ORDER BY pageno",
    )
    .all();
  db.close();
  expect(leaves.length).toBeGreaterThan(4);
  const victim = leaves[Math.floor((leaves.length * 3) / 4)]!.pageno;
  const fd = openSync(dbPath, "r+");
  writeSync(fd, Buffer.alloc(pageSize, 0xa5), 0, pageSize, (victim - 1) * pageSize);
  closeSync(fd);

  s = await startServer({ dir, env: NO_CUSTOMER_LIMITS });
  expect((await getJson(s.url, "/readyz")).status).toBe(200);
  const damaged = await getJson(s.url, "/get_messages_for_conversation", {
    conversation_id: bigConv!,
    access_token: big.access_token,
    limit: 100,
  });
  expect(damaged.status).toBeGreaterThanOrEqual(500);
  // No detail of the file in the answer; the log says what happened.
  expect(JSON.stringify(damaged.body)).not.toMatch(/SQLITE|malformed|corrupt/i);
  expect(s.logs.some((l) => /"level":"error"/.test(l) && /malformed|corrupt/i.test(l))).toBe(true);
  // The rest is served: the other conversation's page, and the server itself.
  const untouched = await getJson(s.url, "/get_messages_for_conversation", {
    conversation_id: smallConv,
    access_token: small.access_token,
  });
  expect(untouched.status).toBe(200);
  expect(untouched.body.messages[0].content).toBe("on an early page");
  expect((await getJson(s.url, "/healthz")).status).toBe(200);
  expectNoSecrets(s.logs, secrets);
});
