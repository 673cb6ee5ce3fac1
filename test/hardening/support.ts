import { type ChildProcess, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { request as httpRequest } from "node:http";
import { resolve } from "node:path";
import type Database from "better-sqlite3";
import { afterAll, beforeAll, expect } from "vitest";
import type { Db } from "../../src/storage/sqlite/index.js";
import { aiagentCommand } from "../helpers/command.js";
import type { FileServer } from "../helpers/file-server.js";
import { idToken, issueTokens, send } from "../helpers/flows.js";
import { killAtExit } from "../helpers/leftovers.js";
import { findSecretShape } from "../helpers/secret-shapes.js";
import { scaled } from "../helpers/time-scale.js";

/** The repository root, for child processes. */
export const ROOT = resolve(import.meta.dirname, "../..");

/**
 * A failed sign-in with a person's e-mail is recorded in that account's audit log: the one write a refused request
 * makes, on purpose (docs/privacy-and-audit.md). Every other row still counts.
 */
export function refusedSignIn(table: string, row: unknown): boolean {
  return table === "audit_events" && (row as { kind?: string }).kind === "sign_in.failed";
}

/** A fingerprint of every row of every table: equal before and after means nothing was written. */
export function dbChecksum(db: Db | Database.Database): string {
  const h = createHash("sha256");
  const tables = db
    .prepare<[], { name: string }>(
      "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name",
    )
    .all()
    // Who has the inbox open (an open watch_account stream marks its person online) is presence, not account data.
    .filter((t) => t.name !== "operator_presence");
  for (const { name } of tables) {
    const rows = db
      .prepare(`SELECT * FROM "${name}"`)
      .all()
      .filter((r) => !refusedSignIn(name, r))
      .map((r) => JSON.stringify(r))
      .sort();
    h.update(`${name}:${rows.length}\n${rows.join("\n")}\n`);
  }
  return h.digest("hex");
}

/** Row counts per table. */
export function rowCounts(db: Db | Database.Database): Record<string, number> {
  const out: Record<string, number> = {};
  for (const { name } of db
    .prepare<[], { name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
    .all()) {
    out[name] = (db.prepare(`SELECT count(*) AS n FROM "${name}"`).get() as { n: number }).n;
  }
  return out;
}

/** Asserts that no secret (given, or shaped like one of ours) appears in the log lines. */
export function expectNoSecrets(lines: readonly string[], secrets: Iterable<string>): void {
  const text = lines.join("\n");
  for (const s of secrets)
    if (s.length >= 8) expect(text.includes(s), `a secret (${s.slice(0, 6)}…) is in the log`).toBe(false);
  expect(findSecretShape(text), "a credential-shaped string is in the log").toBeUndefined();
}

/** A raw HTTP/1.1 request, optionally from a chosen loopback source address (127.0.0.2 is another client). */
export function rawRequest(
  url: string,
  opts: {
    method?: string;
    path: string;
    headers?: Record<string, string>;
    body?: string | Buffer;
    localAddress?: string;
  },
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  const u = new URL(url);
  return new Promise((resolvePromise, reject) => {
    const req = httpRequest(
      {
        host: u.hostname,
        port: u.port,
        method: opts.method ?? "GET",
        path: opts.path,
        headers: opts.headers,
        localAddress: opts.localAddress,
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () =>
          resolvePromise({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks).toString("utf8"),
          }),
        );
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(opts.body);
  });
}

/** POST JSON from a chosen source address. */
export async function postFrom(
  url: string,
  path: string,
  body: unknown,
  localAddress?: string,
  headers: Record<string, string> = {},
) {
  const r = await rawRequest(url, {
    method: "POST",
    path,
    body: JSON.stringify(body),
    headers: { "content-type": "application/json", ...headers },
    localAddress,
  });
  let parsed: any = r.body;
  try {
    parsed = JSON.parse(r.body);
  } catch {
    /* keep text */
  }
  return { status: r.status, headers: r.headers, body: parsed };
}

/** The key-encryption secret of the tests' production-mode servers (production refuses to start without one). */
export const TEST_SECRETS = "test-only-key-encryption-secret-0123456789";

/** `aiagent serve` as a child process, as it runs in production: its own database, its own port. */
export interface ChildServer {
  url: string;
  proc: ChildProcess;
  /** Everything it wrote to stdout and stderr. */
  output: string[];
  /** Resolves with the exit code (or the signal's name). */
  exited: Promise<number | string>;
}

/** Starts `aiagent serve` (aiagentCommand) and waits for its "listening" line. */
export async function startChild(
  dbPath: string,
  env: Record<string, string> = {},
  timeoutMs = 60_000,
): Promise<ChildServer> {
  const proc = spawn(process.execPath, [...aiagentCommand(), "serve", "--db", dbPath, "--port", "0"], {
    cwd: ROOT,
    env: {
      ...process.env,
      NODE_ENV: "production",
      AIAGENT_LOG_LEVEL: "debug",
      AIAGENT_HOST: "127.0.0.1",
      AIAGENT_SECRETS: TEST_SECRETS,
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const output: string[] = [];
  const exited = new Promise<number | string>((r) => proc.once("exit", (code, signal) => r(code ?? signal ?? -1)));
  // However the test run ends, the child does not outlive it.
  void exited.then(killAtExit(proc));
  const url = await new Promise<string>((resolveUrl, reject) => {
    const timer = setTimeout(() => {
      // Not left to start later, unwatched: a child that did not start in time is stopped.
      proc.kill("SIGKILL");
      reject(new Error(`child did not start: ${output.join("")}`));
    }, scaled(timeoutMs));
    let buffered = "";
    const onData = (chunk: Buffer) => {
      const text = chunk.toString("utf8");
      output.push(text);
      buffered += text;
      const m = /"msg":"listening","url":"([^"]+)"/.exec(buffered);
      if (m) {
        clearTimeout(timer);
        resolveUrl(m[1]!);
      }
    };
    proc.stdout!.on("data", onData);
    proc.stderr!.on("data", (c: Buffer) => output.push(c.toString("utf8")));
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`child exited (${code}) before listening: ${output.join("")}`));
    });
  });
  return { url, proc, output, exited };
}

/** Runs the `aiagent` command to completion. */
export function runCli(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  const proc = spawn(process.execPath, [...aiagentCommand(), ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  proc.stdout.on("data", (c: Buffer) => (stdout += c.toString("utf8")));
  proc.stderr.on("data", (c: Buffer) => (stderr += c.toString("utf8")));
  return new Promise((r) => proc.once("exit", (code) => r({ code: code ?? -1, stdout, stderr })));
}

/** A customer of the file server's account A with one conversation, and the owner's ID token. */
export interface CustomerSession {
  access: string;
  refresh: string;
  /** The owner's ID token. */
  id: string;
  conversationId: string;
  /** Every secret above and the account's API key and password; a test adds the ones it makes. */
  secrets: Set<string>;
}

/**
 * Registers the file's `beforeAll` that makes the customer `userId` a session and a conversation ("hello"), and the
 * `afterAll` that expects no log line of the server to hold any of `secrets`. Call it after serverForFile.
 */
export function customerSessionForFile(fx: FileServer, userId: string): CustomerSession {
  const c = { secrets: new Set<string>() } as CustomerSession;
  beforeAll(async () => {
    const t = await issueTokens(fx.s.url, fx.a, userId);
    c.access = t.access_token;
    c.refresh = t.refresh_token;
    c.id = await idToken(fx.s.url, fx.a);
    c.conversationId = (await send(fx.s.url, c.access, "hello")).conversation_id;
    c.secrets.add(fx.a.apiKey).add(fx.a.password).add(c.refresh).add(c.access).add(c.id);
  });
  afterAll(() => expectNoSecrets(fx.s.logs, c.secrets));
  return c;
}
