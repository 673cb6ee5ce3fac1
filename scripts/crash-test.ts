/**
 * Crash test: writers send messages to `aiagent serve` (a child process with its own database and port), the
 * server is killed with SIGKILL at a random moment and restarted, round after round. At the end every message
 * whose send was acknowledged (HTTP 200) must be stored, message_order must be 1..n in every conversation, and
 * PRAGMA integrity_check must say ok.
 *
 *   node --import tsx scripts/crash-test.ts [--rounds 20] [--writers 3] [--db path]
 *
 * The vitest test test/hardening/crash.test.ts runs it with a bounded count as part of `npm test`.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import Database from "better-sqlite3";
import { buildApp } from "../src/app.js";
import { loadConfig } from "../src/config.js";
import { createLogger } from "../src/log.js";

const ROOT = resolve(import.meta.dirname, "..");
// Production refuses to start without a key-encryption secret; this one protects throw-away data only.
const SECRETS = "crash-test-key-encryption-secret-0123456789";

/** Why a writer stopped in a round. */
export type StopReason =
  | "cut by the kill" // its request was in flight when the server died: not acknowledged
  | "between requests at the kill"
  | "bound reached" // 200 messages in one round
  | `failed before the kill: ${string}`
  | `answered ${number}`;

/** One kill-and-restart round. */
export interface CrashRound {
  /** Messages acknowledged in this round. */
  acknowledged: number;
  /** Requests sent and not yet answered at the moment of the kill. */
  inFlightAtKill: number;
  /** Per writer, why it stopped. */
  stops: StopReason[];
}

/** What a run found. */
export interface CrashReport {
  rounds: number;
  perRound: CrashRound[];
  acknowledged: number;
  stored: number;
  conversations: number;
  /** Acknowledged messages missing from the database (must be empty). */
  lost: string[];
  /** Conversations whose message_order is not 1..n or whose count disagrees (must be empty). */
  gaps: string[];
  integrity: string;
  /** Everything the servers printed, for the secret check. */
  output: string[];
  /** The secrets the run handled. */
  secrets: string[];
}

interface Running {
  url: string;
  proc: ChildProcess;
  exited: Promise<unknown>;
}

/** The server's command by default: the sources through tsx. */
const FROM_SOURCE = ["--import", "tsx", "src/cli/main.ts"];

function start(dbPath: string, output: string[], startMs = 30_000, command = FROM_SOURCE): Promise<Running> {
  const proc = spawn(process.execPath, [...command, "serve", "--db", dbPath, "--port", "0"], {
    cwd: ROOT,
    env: {
      ...process.env,
      NODE_ENV: "production",
      AIAGENT_LOG_LEVEL: "debug",
      AIAGENT_HOST: "127.0.0.1",
      AIAGENT_RATE_LIMIT: "off",
      AIAGENT_SECRETS: SECRETS,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const exited = new Promise((r) => proc.once("exit", r));
  return new Promise((resolveStart, reject) => {
    let buf = "";
    const timer = setTimeout(() => {
      proc.kill("SIGKILL");
      reject(new Error(`server did not start: ${buf}`));
    }, startMs);
    proc.stdout!.on("data", (c: Buffer) => {
      output.push(c.toString("utf8"));
      buf += c.toString("utf8");
      const m = /"msg":"listening","url":"([^"]+)"/.exec(buf);
      if (m) {
        clearTimeout(timer);
        resolveStart({ url: m[1]!, proc, exited });
      }
    });
    proc.stderr!.on("data", (c: Buffer) => output.push(c.toString("utf8")));
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`server exited before listening: ${output.join("")}`));
    });
  });
}

async function post(url: string, body: unknown): Promise<{ status: number; body: any }> {
  const r = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
  const text = await r.text();
  return { status: r.status, body: text ? JSON.parse(text) : undefined };
}

/** Runs the crash test; resolves with what it found (the caller decides pass or fail). */
export async function runCrashTest(opts: {
  rounds: number;
  writers?: number;
  dbPath?: string;
  log?: (line: string) => void;
  /** How long a start may take before the run fails (a loaded machine needs longer); 30 s by default. */
  startMs?: number;
  /** node's arguments that run `aiagent` (before `serve`); the sources through tsx by default. */
  command?: string[];
}): Promise<CrashReport> {
  const dir = opts.dbPath ? undefined : mkdtempSync(join(tmpdir(), "aiagent-crash-"));
  const dbPath = opts.dbPath ?? join(dir!, "aiagent.db");
  const writers = opts.writers ?? 3;
  const output: string[] = [];

  // The account, chatbot and key are made in this process before the server ever starts.
  const setup = await buildApp(loadConfig({ AIAGENT_DB: dbPath, AIAGENT_SECRETS: SECRETS }), createLogger("silent"));
  const email = `crash-${Date.now()}@example.com`;
  await setup.accounts.createAccount(email);
  const chatbotId = (await setup.accounts.createChatbot(email, "crash bot", ["https://shop.example"], [])).chatbotId;
  const apiKey = (await setup.accounts.createApiKey(email)).clientApiKey;
  await setup.close();
  const secrets = [apiKey];

  const acknowledged = new Set<string>();
  const perRound: CrashRound[] = [];
  const conversationOf: (string | undefined)[] = new Array(writers).fill(undefined);
  let accessToken = "";

  try {
    for (let round = 0; round < opts.rounds; round++) {
      const server = await start(dbPath, output, opts.startMs, opts.command);
      if (!accessToken) {
        const t = await post(`${server.url}/ai_agent/get_access_token`, {
          user_id: "crash-user",
          chatbot_id: chatbotId,
          client_api_key: apiKey,
        });
        if (t.status !== 200) throw new Error(`get_access_token: ${t.status} ${JSON.stringify(t.body)}`);
        accessToken = t.body.data.access_token;
        secrets.push(accessToken, t.body.data.refresh_token);
      }
      let dead = false;
      let inFlight = 0;
      let ackedThisRound = 0;
      let firstAck: () => void = () => undefined;
      const busy = new Promise<void>((r) => (firstAck = r));
      const sendUrl = `${server.url}/ai_agent/send_message?access_token=${accessToken}`;
      const work = Array.from({ length: writers }, async (_, w): Promise<StopReason> => {
        // Bounded: a writer stops at the kill, or after 200 messages in one round.
        for (let i = 0; i < 200; i++) {
          if (dead) return "between requests at the kill";
          let r: Awaited<ReturnType<typeof post>>;
          inFlight++;
          try {
            r = await post(sendUrl, {
              content: `round ${round} writer ${w} message ${i}`,
              ...(conversationOf[w] ? { conversation_id: conversationOf[w] } : {}),
            });
          } catch (e) {
            // Died mid-request: this message was not acknowledged. Before the kill, something else is wrong.
            return dead ? "cut by the kill" : `failed before the kill: ${(e as Error).message}`;
          } finally {
            inFlight--;
          }
          if (r.status !== 200) return `answered ${r.status}`;
          const d = r.body.data;
          conversationOf[w] ??= d.conversation_id;
          acknowledged.add(d.user_message.message_id);
          if (d.reply) acknowledged.add(d.reply.message_id);
          ackedThisRound++;
          firstAck();
        }
        return "bound reached";
      });
      // The kill comes at a random moment once the writers are busy (the first message of the round answered), so
      // it lands among writes, not on an idle server still starting up.
      await Promise.race([busy, Promise.all(work)]);
      await new Promise((r) => setTimeout(r, Math.random() * 300));
      const inFlightAtKill = inFlight;
      server.proc.kill("SIGKILL");
      dead = true;
      await server.exited;
      const stops = await Promise.all(work);
      perRound.push({ acknowledged: ackedThisRound, inFlightAtKill, stops });
      opts.log?.(
        `round ${round + 1}/${opts.rounds}: ${ackedThisRound} acknowledged, ${inFlightAtKill} in flight at the kill, writers stopped: ${stops.join("; ")}`,
      );
    }

    const db = new Database(dbPath, { readonly: false });
    try {
      const stored = new Set(
        db
          .prepare<[], { message_id: string }>("SELECT message_id FROM messages")
          .all()
          .map((r) => r.message_id),
      );
      const gaps = db
        .prepare<[], { conversation_id: string }>(
          `SELECT c.conversation_id FROM conversations c LEFT JOIN messages m ON m.conversation_id = c.conversation_id
           GROUP BY c.conversation_id
           HAVING count(m.message_id) <> c.message_count OR coalesce(max(m.message_order), 0) <> count(m.message_id) OR coalesce(min(m.message_order), 1) <> 1`,
        )
        .all()
        .map((r) => r.conversation_id);
      return {
        rounds: opts.rounds,
        perRound,
        acknowledged: acknowledged.size,
        stored: stored.size,
        conversations: (db.prepare("SELECT count(*) AS n FROM conversations").get() as { n: number }).n,
        lost: [...acknowledged].filter((id) => !stored.has(id)),
        gaps,
        integrity: String(db.pragma("integrity_check", { simple: true })),
        output,
        secrets,
      };
    } finally {
      db.close();
    }
  } finally {
    if (dir) rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({
    options: {
      rounds: { type: "string", default: "20" },
      writers: { type: "string", default: "3" },
      db: { type: "string" },
    },
  });
  const report = await runCrashTest({
    rounds: Number(values.rounds),
    writers: Number(values.writers),
    ...(values.db ? { dbPath: values.db } : {}),
    log: (l) => console.log(l),
  });
  const ok = report.lost.length === 0 && report.gaps.length === 0 && report.integrity === "ok";
  console.log(
    JSON.stringify({
      ok,
      rounds: report.rounds,
      roundsWithWritesInFlight: report.perRound.filter((r) => r.inFlightAtKill > 0).length,
      acknowledged: report.acknowledged,
      stored: report.stored,
      conversations: report.conversations,
      lost: report.lost.length,
      gaps: report.gaps.length,
      integrity: report.integrity,
    }),
  );
  process.exit(ok ? 0 : 1);
}
