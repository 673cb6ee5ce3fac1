// The CPU a frame read (S1's request: 20 messages over the JSON route) costs on this checkout and on another (e.g. the
// commit before a change), measured in turns on two servers running side by side, so the machine's other load falls
// on both alike. Usage: node --import tsx bench/instrumentation-cost.ts /path/to/other/checkout [rounds]
// The other checkout needs node_modules (a symlink to this one's will do). With `--metrics` instead of a checkout, both
// servers run this checkout, "this" with AIAGENT_METRICS_TOKEN set (every RPC observed) and "other" without (none).
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import autocannon from "autocannon";

const HERE = resolve(import.meta.dirname, "..");
const metricsMode = process.argv[2] === "--metrics";
const other = metricsMode ? HERE : resolve(process.argv[2] ?? "");
const rounds = Number(process.argv[3] ?? 8);
const work = mkdtempSync(join(tmpdir(), "aiagent-instr-cost-"));
const children: ChildProcess[] = [];

/** User plus system CPU time of a process so far, in microseconds (Linux /proc). */
function cpuMicros(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return ((Number(fields[11]) + Number(fields[12])) * 1e6) / 100;
}

async function post(url: string, path: string, body: unknown): Promise<any> {
  const r = await fetch(url + path, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return r.json();
}

async function start(root: string, name: string, port: number, extra: NodeJS.ProcessEnv = {}) {
  // What observes requests comes only from `extra`: none of it is inherited from this shell.
  const inherited = Object.entries(process.env).filter(
    ([k]) => k !== "AIAGENT_METRICS_TOKEN" && !k.startsWith("OTEL_"),
  );
  const env: NodeJS.ProcessEnv = {
    ...Object.fromEntries(inherited),
    ...extra,
    AIAGENT_DB: join(work, `${name}.db`),
    AIAGENT_PORT: String(port),
    AIAGENT_LOG_LEVEL: "warn",
    AIAGENT_RATE_LIMIT: "off",
    AIAGENT_SECRETS: "instrumentation-cost-secret-0123456789abcdef",
  };
  delete env.NODE_ENV;
  const proc = spawn(process.execPath, ["--import", "tsx", join(root, "src/cli/main.ts"), "serve"], {
    cwd: root,
    env,
    stdio: ["ignore", "pipe", "inherit"],
  });
  children.push(proc);
  let out = "";
  const demo = await new Promise<{ key: string; chatbot: string }>((done, fail) => {
    const timer = setTimeout(() => fail(new Error(`${name} did not start`)), 60_000);
    proc.stdout!.on("data", (d: Buffer) => {
      out += d.toString();
      const key = /client_api_key: (\S+)/.exec(out)?.[1];
      const chatbot = /chatbot_id:\s+(\S+)/.exec(out)?.[1];
      if (key && chatbot && out.includes("console:")) {
        clearTimeout(timer);
        done({ key, chatbot });
      }
    });
  });
  const url = `http://127.0.0.1:${port}`;
  const t = await post(url, "/ai_agent/get_access_token", {
    user_id: "bench-user",
    chatbot_id: demo.chatbot,
    client_api_key: demo.key,
  });
  const token = t.data.access_token as string;
  let conversation = "";
  for (let i = 0; i < 10; i++) {
    const m = await post(url, `/ai_agent/send_message?access_token=${token}`, {
      content: `question ${i}`,
      ...(conversation ? { conversation_id: conversation } : {}),
    });
    conversation = m.data.conversation_id;
  }
  const path = `/get_messages_for_conversation?conversation_id=${conversation}&limit=20&access_token=${token}`;
  return { name, pid: proc.pid!, url, path };
}

/** Closed-loop load of frame reads on one server for `seconds`. */
function load(s: { url: string; path: string }, seconds: number) {
  return autocannon({ url: s.url, connections: 16, duration: seconds, requests: [{ method: "GET", path: s.path }] });
}

try {
  const observed = metricsMode ? { AIAGENT_METRICS_TOKEN: "instrumentation-cost-metrics-token-0123456789" } : {};
  const servers = [await start(HERE, "this", 18_181, observed), await start(other, "other", 18_182)];
  // Warm-up, not measured: the JIT compiles the request path first.
  for (const s of servers) await load(s, 4);
  const perRequest: Record<string, number[]> = { this: [], other: [] };
  for (let round = 0; round < rounds; round++) {
    for (const s of round % 2 ? [...servers].reverse() : servers) {
      const before = cpuMicros(s.pid);
      const r = await load(s, 2);
      const cpu = cpuMicros(s.pid) - before;
      perRequest[s.name]!.push(cpu / r.requests.total);
    }
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  for (const [name, xs] of Object.entries(perRequest))
    console.log(
      `${name}: median ${median(xs).toFixed(0)} µs CPU per request (${xs.map((x) => x.toFixed(0)).join(", ")})`,
    );
  console.log(`this ÷ other: ${(median(perRequest.this!) / median(perRequest.other!)).toFixed(3)}`);
} finally {
  for (const c of children) c.kill("SIGKILL");
  rmSync(work, { recursive: true, force: true });
}
