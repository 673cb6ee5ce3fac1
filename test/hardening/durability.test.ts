import { spawn, spawnSync } from "node:child_process";
import {
  closeSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  rmSync,
  statSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { type ClientRequest, request as httpRequest, type IncomingMessage } from "node:http";
import { connect as h2connect } from "node:http2";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { buildApp } from "../../src/app.js";
import { loadConfig } from "../../src/config.js";
import { createLogger } from "../../src/log.js";
import { idToken, issueTokens, send } from "../helpers/flows.js";
import { getJson, type JsonResponse, postJson } from "../helpers/http.js";
import { NO_CUSTOMER_LIMITS, startServer, type TestAccount, type TestServer } from "../helpers/server.js";
import { sqliteDb } from "../helpers/sqlite.js";
import { type ChildServer, dbChecksum, expectNoSecrets, ROOT, runCli, startChild, TEST_SECRETS } from "./support.js";

const secrets = new Set<string>();
const servers: TestServer[] = [];
const children: ChildServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) {
    expectNoSecrets(s.logs, secrets);
    await s.close(true);
  }
  for (const c of children.splice(0)) {
    c.proc.kill("SIGKILL");
    await c.exited;
  }
});

async function server(env: Record<string, string> = {}, dir?: string): Promise<TestServer> {
  // Its customers write loads (filling a disk, a SIGTERM's traffic): the customer limits are off.
  const s = await startServer({ env: { ...NO_CUSTOMER_LIMITS, ...env }, ...(dir ? { dir } : {}) });
  servers.push(s);
  return s;
}

async function account(s: TestServer): Promise<TestAccount> {
  const a = await s.account();
  secrets.add(a.apiKey).add(a.password);
  return a;
}

/** A second process that takes SQLite's write lock on the file and keeps it until told to let go. */
async function holdExclusiveLock(dbPath: string): Promise<{ release(): Promise<void> }> {
  const script = `
    const db = new (require("better-sqlite3"))(process.argv[1]);
    db.exec("BEGIN EXCLUSIVE");
    process.stdout.write("locked\\n");
    process.stdin.once("data", () => { db.exec("COMMIT"); db.close(); process.stdout.write("released\\n"); process.exit(0); });
  `;
  const proc = spawn(process.execPath, ["-e", script, dbPath], { cwd: ROOT, stdio: ["pipe", "pipe", "inherit"] });
  const lines = (async function* () {
    let buf = "";
    for await (const chunk of proc.stdout) {
      buf += String(chunk);
      let i: number;
      while ((i = buf.indexOf("\n")) >= 0) {
        yield buf.slice(0, i);
        buf = buf.slice(i + 1);
      }
    }
  })();
  expect((await lines.next()).value).toBe("locked");
  return {
    async release() {
      proc.stdin.write("go\n");
      expect((await lines.next()).value).toBe("released");
    },
  };
}

describe("a database locked by another process", () => {
  it("writes answer 503 unavailable with Retry-After after the busy timeout, reads go on, and writes succeed once the lock is gone", async () => {
    const s = await server({ AIAGENT_BUSY_TIMEOUT_MS: "300" });
    const a = await account(s);
    const t = await issueTokens(s.url, a, "locked-user");
    const id = await idToken(s.url, a);
    secrets.add(t.access_token).add(t.refresh_token).add(id);
    const conv = (await send(s.url, t.access_token, "before the lock")).conversation_id;

    const lock = await holdExclusiveLock(s.dbPath);
    const before = dbChecksum(sqliteDb(s.app));
    for (const write of [
      () =>
        postJson(s.url, `/ai_agent/send_message?access_token=${t.access_token}`, {
          conversation_id: conv,
          content: "during the lock",
        }),
      () =>
        postJson(s.url, "/ai_agent/get_access_token", {
          user_id: "new-user",
          chatbot_id: a.chatbotId,
          client_api_key: a.apiKey,
        }),
      () =>
        postJson(
          s.url,
          "/reply_to_conversation",
          { conversation_id: conv, content: "operator" },
          { authorization: `Bearer ${id}` },
        ),
    ]) {
      // It answers rather than hangs (the test's own timeout is the bound: no speed claim here).
      const r = await write();
      expect(r.status).toBe(503);
      expect(r.body.code).toBe("unavailable");
      expect(Number(r.headers.get("retry-after"))).toBeGreaterThan(0);
    }
    // WAL readers do not wait for the writer's lock.
    expect(
      (await getJson(s.url, "/get_messages_for_conversation", { conversation_id: conv, access_token: t.access_token }))
        .status,
    ).toBe(200);
    await lock.release();
    expect(dbChecksum(sqliteDb(s.app))).toBe(before);
    const after = await send(s.url, t.access_token, "after the lock", conv);
    expect(after.user_message.message_order).toBe(3);
  });
});

/** message_order is 1..n in every conversation and each conversation's count agrees with its rows. */
function expectConsistent(db: Database.Database) {
  const bad = db
    .prepare(
      `SELECT c.conversation_id FROM conversations c LEFT JOIN messages m ON m.conversation_id = c.conversation_id
       GROUP BY c.conversation_id HAVING count(m.message_id) <> c.message_count OR coalesce(max(m.message_order), 0) <> count(m.message_id) OR coalesce(min(m.message_order), 1) <> 1`,
    )
    .all();
  expect(bad).toEqual([]);
  expect(db.pragma("integrity_check", { simple: true })).toBe("ok");
}

describe("a full database", () => {
  it("writes answer 503 and leave no partial rows; once there is room again the service goes on (max_page_count)", async () => {
    const s = await server();
    const a = await account(s);
    const t = await issueTokens(s.url, a, "full-user");
    const id = await idToken(s.url, a);
    secrets.add(t.access_token).add(t.refresh_token).add(id);
    const conv = (await send(s.url, t.access_token, "first")).conversation_id;
    const pages = sqliteDb(s.app).pragma("page_count", { simple: true }) as number;
    sqliteDb(s.app).pragma(`max_page_count = ${pages}`);
    let status = 200;
    for (let i = 0; i < 2000 && status === 200; i++) {
      status = (
        await postJson(
          s.url,
          "/reply_to_conversation",
          { conversation_id: conv, content: `filler ${i} ${"x".repeat(2000)}` },
          { authorization: `Bearer ${id}` },
        )
      ).status;
    }
    expect(status).toBe(503);
    const before = dbChecksum(sqliteDb(s.app));
    // Each needs new pages (overflow pages for long content): none fits in what is left.
    const refused = [
      await postJson(
        s.url,
        "/reply_to_conversation",
        { conversation_id: conv, content: "y".repeat(7000) },
        { authorization: `Bearer ${id}` },
      ),
      await postJson(s.url, `/ai_agent/send_message?access_token=${t.access_token}`, {
        conversation_id: conv,
        content: "w".repeat(7000),
      }),
    ];
    for (const r of refused) {
      expect(r.status).toBe(503);
      expect(r.body.code).toBe("unavailable");
      expect(r.headers.get("retry-after")).not.toBeNull();
    }
    expect(dbChecksum(sqliteDb(s.app))).toBe(before);
    expect((await getJson(s.url, "/readyz")).status).toBe(200);
    sqliteDb(s.app).pragma("max_page_count = 1073741823");
    expect((await send(s.url, t.access_token, "room again", conv)).user_message.content).toBe("room again");
    expectConsistent(sqliteDb(s.app));
  });

  /** Why the real full-disk test cannot run here, or undefined when it can. */
  const cannotMount = ((): string | undefined => {
    if (process.platform !== "linux") return `not Linux (${process.platform})`;
    if (process.getuid?.() !== 0) return "not running as root";
    const probe = mkdtempSync(join(tmpdir(), "aiagent-mount-probe-"));
    const ok = spawnSync("mount", ["-t", "tmpfs", "-o", "size=64k", "tmpfs", probe]).status === 0;
    if (ok) spawnSync("umount", [probe]);
    rmSync(probe, { recursive: true, force: true });
    return ok ? undefined : "mount -t tmpfs was refused (a container without CAP_SYS_ADMIN?)";
  })();
  const canMount = cannotMount === undefined;
  // A skip says why, in one line of the test output.
  if (cannotMount)
    console.warn(`durability.test.ts: skipping the real full-disk (tmpfs) test: ${cannotMount}; max_page_count ran`);

  // Needs root and mount (true here and in CI containers run as root); the max_page_count test above always runs.
  it.skipIf(!canMount)(
    "on a real full disk (a 2 MiB tmpfs): 503, no partial rows, and recovery when space returns",
    async () => {
      const dir = mkdtempSync(join(tmpdir(), "aiagent-full-"));
      expect(spawnSync("mount", ["-t", "tmpfs", "-o", "size=2m", "tmpfs", dir]).status).toBe(0);
      try {
        const s = await server({}, dir);
        const a = await account(s);
        const t = await issueTokens(s.url, a, "disk-user");
        secrets.add(t.access_token).add(t.refresh_token);
        const conv = (await send(s.url, t.access_token, "first")).conversation_id;
        // Fill the disk with another file.
        const filler = join(dir, "filler");
        const fd = openSync(filler, "w");
        const block = Buffer.alloc(64 * 1024, 1);
        try {
          for (let i = 0; i < 64; i++) writeSync(fd, block);
        } catch (e) {
          expect((e as NodeJS.ErrnoException).code).toBe("ENOSPC");
        }
        try {
          writeSync(fd, Buffer.alloc(4096, 1));
        } catch {
          /* full to the last block */
        }
        closeSync(fd);
        let status = 200;
        for (let i = 0; i < 500 && status === 200; i++)
          status = (
            await postJson(s.url, `/ai_agent/send_message?access_token=${t.access_token}`, {
              conversation_id: conv,
              content: `m${i} ${"z".repeat(3000)}`,
            })
          ).status;
        expect(status).toBe(503);
        expectConsistent(sqliteDb(s.app));
        rmSync(filler);
        const again = await send(s.url, t.access_token, "space again", conv);
        expect(again.user_message.content).toBe("space again");
        expectConsistent(sqliteDb(s.app));
        await s.close();
        servers.splice(servers.indexOf(s), 1);
        expectNoSecrets(s.logs, secrets);
      } finally {
        spawnSync("umount", ["-l", dir]);
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );
});

describe("start-up", () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "aiagent-start-"));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it.each([
    ["garbage", () => Buffer.from("this is not a database at all ".repeat(200))],
    ["a zeroed header", () => Buffer.alloc(8192)],
  ])("a database file holding %s: `aiagent serve` exits non-zero and says why", async (name, content) => {
    const path = join(dir, `${name.replace(/\W/g, "-")}.db`);
    writeFileSync(path, content());
    const r = await runCli(["serve", "--db", path, "--port", "0"], {
      NODE_ENV: "production",
      AIAGENT_SECRETS: TEST_SECRETS,
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/cannot open database .*(not a database|malformed)/);
    // And it did not "repair" the file by replacing it.
    expect(statSync(path).size).toBe(content().length);
  });

  it("a path that is a directory fails the same way", async () => {
    const path = join(dir, "a-directory.db");
    mkdirSync(path);
    const r = await runCli(["serve", "--db", path, "--port", "0"], {
      NODE_ENV: "production",
      AIAGENT_SECRETS: TEST_SECRETS,
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("cannot open database");
  });

  it("a missing directory is created (a fresh clone has no ./data)", async () => {
    const path = join(dir, "new", "nested", "aiagent.db");
    const c = await startChild(path);
    children.push(c);
    expect((await fetch(`${c.url}/readyz`)).status).toBe(200);
    expect(existsSync(path)).toBe(true);
  });
});

/** An HTTP/1.1 request whose body is held back until `finish` is called; resolves `continued` once the server has read its headers. */
function heldRequest(url: string, path: string, body: string) {
  const u = new URL(url);
  let req!: ClientRequest;
  const response = new Promise<{ status: number; body: string }>((resolve, reject) => {
    req = httpRequest(
      {
        host: u.hostname,
        port: u.port,
        method: "POST",
        path,
        agent: false,
        headers: {
          "content-type": "application/json",
          "content-length": String(Buffer.byteLength(body)),
          expect: "100-continue",
        },
      },
      (res: IncomingMessage) => {
        let text = "";
        res.on("data", (c: Buffer) => (text += c.toString("utf8")));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }));
      },
    );
    req.on("error", reject);
  });
  // Node's server answers 100 Continue when the request handler starts: the request is then in flight.
  const continued = new Promise<void>((resolve) => req.once("continue", () => resolve()));
  req.flushHeaders();
  return { response, continued, finish: () => req.end(body) };
}

describe("SIGTERM", () => {
  it("under load: in-flight requests finish, the WAL is checkpointed, the process exits 0, and every acknowledged message is stored", async () => {
    const dir = mkdtempSync(join(tmpdir(), "aiagent-sigterm-"));
    const dbPath = join(dir, "aiagent.db");
    const setup = await buildApp(
      loadConfig({ AIAGENT_DB: dbPath, AIAGENT_SECRETS: TEST_SECRETS }),
      createLogger("silent"),
    );
    const email = "sigterm@example.com";
    await setup.accounts.createAccount(email);
    const chatbotId = (await setup.accounts.createChatbot(email, "bot", ["https://shop.example"], [])).chatbotId;
    const apiKey = (await setup.accounts.createApiKey(email)).clientApiKey;
    await setup.close();
    secrets.add(apiKey);

    const c = await startChild(dbPath, NO_CUSTOMER_LIMITS);
    children.push(c);
    const t = await issueTokens(c.url, { accountId: "", email, password: "", apiKey, chatbotId }, "sigterm-user");
    secrets.add(t.access_token).add(t.refresh_token);
    const conv = (await send(c.url, t.access_token, "hello")).conversation_id;
    const acknowledged = new Set<string>();
    const path = `/ai_agent/send_message?access_token=${t.access_token}`;

    // Load: writers that keep sending until the server stops answering.
    let stop = false;
    let terminated = false;
    let loadAcknowledged = 0;
    const loadFailures: string[] = [];
    const load = Array.from({ length: 4 }, async (_, w) => {
      for (let i = 0; i < 500 && !stop; i++) {
        let r: JsonResponse;
        try {
          r = await postJson(c.url, path, { conversation_id: conv, content: `load ${w}/${i}` });
        } catch (e) {
          // Connection refused or reset: the server has stopped accepting. Before SIGTERM that is a failure.
          if (!terminated) loadFailures.push(`writer ${w}: ${(e as Error).message}`);
          return;
        }
        expect(r.status).toBeLessThan(500);
        if (r.status === 200) {
          acknowledged.add(r.body.data.user_message.message_id);
          loadAcknowledged++;
        }
      }
    });
    // In flight: 10 requests whose headers the server has read, bodies not yet sent.
    const held = Array.from({ length: 10 }, (_, i) =>
      heldRequest(c.url, path, JSON.stringify({ conversation_id: conv, content: `held ${i}` })),
    );
    await Promise.all(held.map((h) => h.continued));
    // An HTTP/2 client (gRPC's transport) with an open connection is told to go away.
    const h2 = h2connect(c.url);
    await new Promise<void>((resolve, reject) =>
      h2
        .request({ ":path": "/healthz" })
        .on("response", () => resolve())
        .on("error", reject)
        .resume()
        .end(),
    );
    const goaway = new Promise<void>((resolve) => h2.once("goaway", () => resolve()));
    const h2closed = new Promise<void>((resolve) => h2.once("close", () => resolve()));
    h2.on("error", () => undefined);
    // The load has been answered before the signal, so the writes under way at it are real.
    while (loadAcknowledged === 0 && loadFailures.length === 0) await new Promise((r) => setImmediate(r));
    terminated = true;
    c.proc.kill("SIGTERM");
    while (!c.output.join("").includes('"msg":"stopping"')) await new Promise((r) => setImmediate(r));
    // It stops accepting: a new connection is refused, while the held requests below are still served.
    const fresh = await new Promise<string>((resolve) => {
      const u = new URL(c.url);
      httpRequest({ host: u.hostname, port: u.port, path: "/healthz", agent: false }, (res) =>
        resolve(`answered ${res.statusCode}`),
      )
        .on("error", (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message))
        .end();
    });
    // Refused, or reset when it reached the kernel's accept queue just before the listener closed: never answered.
    expect(["ECONNREFUSED", "ECONNRESET"]).toContain(fresh);
    for (const h of held) h.finish();
    const answers = await Promise.all(held.map((h) => h.response));
    for (const a of answers) {
      expect(a.status).toBe(200);
      acknowledged.add(JSON.parse(a.body).data.user_message.message_id);
    }
    stop = true;
    await Promise.all(load);
    await goaway;
    await h2closed;
    expect(await c.exited).toBe(0);
    children.splice(children.indexOf(c), 1);

    expect(c.output.join("")).toContain('"msg":"stopped"');
    expectNoSecrets(c.output, secrets);
    const wal = `${dbPath}-wal`;
    expect(!existsSync(wal) || statSync(wal).size === 0).toBe(true);
    const db = new Database(dbPath, { readonly: true });
    try {
      const stored = new Set(
        db
          .prepare<[], { message_id: string }>("SELECT message_id FROM messages")
          .all()
          .map((r) => r.message_id),
      );
      expect(loadFailures).toEqual([]);
      expect(loadAcknowledged).toBeGreaterThan(0);
      // The ten held requests and the load's answers, each stored.
      expect(acknowledged.size).toBe(10 + loadAcknowledged);
      for (const id of acknowledged) expect(stored.has(id)).toBe(true);
      expectConsistent(db);
    } finally {
      db.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
