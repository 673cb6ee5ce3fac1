// Two builds of the service side by side, driven alternately on the same rows: what a change measures on a busy
// machine, where one run of `npm run bench` against another moves more than most changes do.
//
//   node --import tsx bench/ab.ts --base /path/to/other/checkout [--rows S4,S5,S4-pg,S3a-o,S1-o] [--rounds 6] [--duration 5]
//
// Both servers run at once on their own copy of the 10k dataset (the bench's cache: run `npm run bench -- --quick`
// once first), are warmed up, then each row runs on A, then on B, then on A… and the CPU per request of each server
// (user + system, /proc; and its main thread's alone, the event loop) is printed per round, with the ratio B ÷ A of
// the medians. The load generator is wrk (the closed-loop rows) or the bench's open-loop client at 1,000 req/s offered
// (the `-o` rows). A `-pg` row (S4-pg, S5-pg) runs its row on a second server per side, on PostgreSQL (127.0.0.1:5432
// or AIAGENT_BENCH_DATABASE_URL), each side on its own copy of the same dataset, dropped at the end. The row P4 (the
// oidc-provider peer's client_credentials grant, bench/servers/oidc-peer.ts) runs once per round on one peer server
// beside both sides, and each round then prints S4 ÷ P4 in req/s for A and for B (the bench's target, measured in the
// same rounds).
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { abOptions, abSide } from "./lib/ab-options.js";
import { type HttpRequestSpec, runOpenLoop, runWrk } from "./lib/load.js";
import { benchPostgres, copyToPostgres, type PgDataset } from "./lib/postgres.js";
import { cpuMicros, loopCpuMicros } from "./lib/proc.js";
import { type ServerProcess, startServer } from "./lib/procs.js";
import { median } from "./lib/stats.js";

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(HERE, "..");
const opt = abOptions(ROOT, {
  rows: { type: "string", default: "S4,S5" },
  duration: { type: "string", default: "5" },
});
const rows = String(opt.rows).split(",");
const seconds = Number(opt.duration);
// The 10k dataset the bench seeded (`npm run bench -- --quick` seeds it once).
const dataFile = (pattern: RegExp) => {
  const name = readdirSync(join(opt.cache, "data")).find((f) => pattern.test(f));
  if (!name) throw new Error(`no 10k dataset in ${opt.cache}: run \`npm run bench -- --quick\` once first`);
  return join(opt.cache, "data", name);
};
const meta = JSON.parse(readFileSync(dataFile(/^10k-.*\.json$/), "utf8")) as {
  chatbot_id: string;
  client_api_key: string;
  email: string;
  samples: { user_id: string; conversation_id: string }[];
};
const dbFile = dataFile(/^10k-.*\.db$/);

const work = mkdtempSync(join(tmpdir(), "aiagent-ab-"));
const servers: ServerProcess[] = [];
const builds: string[] = [];
const pgCopies: PgDataset[] = [];
process.env.AIAGENT_SECRETS ??= "bench-only-key-encryption-secret-0123456789";
const pgAdmin = rows.some((r) => r.endsWith("-pg")) ? await benchPostgres() : undefined;
if (rows.some((r) => r.endsWith("-pg")) && !pgAdmin)
  throw new Error("a -pg row: no PostgreSQL answers (set AIAGENT_BENCH_DATABASE_URL, or run one on 127.0.0.1:5432)");

async function side(name: string, root: string) {
  // Built inside its checkout, so that its packages resolve.
  const env = { AIAGENT_ID_TOKEN_TTL: "7200" };
  const { build, server: s } = await abSide(name, root, dbFile, work, env);
  builds.push(build);
  servers.push(s);
  const requests = await requestsFor(s.url);
  if (!pgAdmin) return { name, build, s, requests };
  // The same build again on its own PostgreSQL copy of the dataset (AIAGENT_DB is then unused).
  const copy = await copyToPostgres(
    pgAdmin,
    { scale: "10k", path: dbFile, seed: meta as never, builtNow: false },
    console.log,
  );
  pgCopies.push(copy);
  const { build: pgBuild, server: pgServer } = await abSide(`${name}-pg`, root, dbFile, work, {
    ...env,
    AIAGENT_DATABASE_URL: copy.url,
  });
  builds.push(pgBuild);
  servers.push(pgServer);
  const pgRequests = await requestsFor(pgServer.url);
  return { name, build, s, requests, pg: { s: pgServer, requests: pgRequests } };
}

const post = (path: string, body: unknown): HttpRequestSpec => ({
  method: "POST",
  path,
  body: JSON.stringify(body),
  headers: { "content-type": "application/json" },
});
const get = (path: string, headers: Record<string, string> = {}): HttpRequestSpec => ({ method: "GET", path, headers });

async function json(base: string, r: HttpRequestSpec): Promise<Record<string, unknown>> {
  const res = await fetch(base + r.path, { method: r.method, headers: r.headers, body: r.body });
  if (res.status !== 200) throw new Error(`${r.path}: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { data: Record<string, unknown> }).data;
}

async function requestsFor(base: string): Promise<Record<string, HttpRequestSpec[]>> {
  const key = { chatbot_id: meta.chatbot_id, client_api_key: meta.client_api_key };
  const samples = [];
  for (const s of meta.samples.slice(0, 64)) {
    const t = await json(base, post("/ai_agent/get_access_token", { user_id: s.user_id, ...key }));
    samples.push({ ...s, access: t.access_token as string, refresh: t.refresh_token as string });
  }
  const id = await json(
    base,
    post("/get_id_token", { user_email_id: meta.email, client_api_key: meta.client_api_key }),
  );
  const bearer = { authorization: `Bearer ${(id.idToken ?? id.id_token) as string}` };
  const list = (q: string) =>
    get(`/get_contact_conversations?user_email_id=${encodeURIComponent(meta.email)}${q}`, bearer);
  return {
    S4: Array.from({ length: 256 }, (_, i) =>
      post("/ai_agent/get_access_token", { user_id: `ab_${i.toString(36)}`, ...key }),
    ),
    S5: samples.map((s) =>
      post("/ai_agent/refresh_token", { user_id: s.user_id, chatbot_id: meta.chatbot_id, refresh_token: s.refresh }),
    ),
    "S1-o": samples.map((s) =>
      get(`/get_messages_for_conversation?conversation_id=${s.conversation_id}&access_token=${s.access}`),
    ),
    "S3a-o": [list("")],
    "S3u-o": [list("&filter=unread")],
  };
}

/** The oidc-provider peer (P4), from B's build: its client_credentials grant as the bench sends it. */
async function peerSide(build: string) {
  const file = join(work, "oidc-peer.json");
  const s = await startServer("oidc-provider", join(build, "bench/servers/oidc-peer.js"), [file, "1"], {
    ...process.env,
    NODE_ENV: "production",
  });
  servers.push(s);
  const px = JSON.parse(readFileSync(file, "utf8")) as {
    resource: string;
    scope: string;
    clientId: string;
    clientSecret: string;
  };
  const grant: HttpRequestSpec = {
    method: "POST",
    path: "/token",
    body: new URLSearchParams({ grant_type: "client_credentials", resource: px.resource, scope: px.scope }).toString(),
    headers: {
      "content-type": "application/x-www-form-urlencoded",
      authorization: `Basic ${Buffer.from(`${px.clientId}:${px.clientSecret}`).toString("base64")}`,
    },
  };
  return { name: "peer", build, s, requests: { P4: [grant] } as Record<string, HttpRequestSpec[]>, pg: undefined };
}

try {
  const a = await side("A", opt.base);
  const b = await side("B", ROOT);
  const peer = rows.includes("P4") ? await peerSide(b.build) : undefined;
  const open = join(b.build, "bench/lib/open-loop-child.js");
  // A -pg row is its row on the side's PostgreSQL server; P4 is the peer's.
  const on = (sd: typeof a, row: string) =>
    row === "P4"
      ? { s: peer!.s, requests: peer!.requests.P4! }
      : row.endsWith("-pg")
        ? { s: sd.pg!.s, requests: sd.pg!.requests[row.slice(0, -3)]! }
        : { s: sd.s, requests: sd.requests[row]! };
  const sidesOf = (row: string, round: number) => (row === "P4" ? [a] : round % 2 ? [a, b] : [b, a]);
  const nameOf = (sd: typeof a, row: string) => (row === "P4" ? "peer" : sd.name);
  const drive = (sd: typeof a, row: string, secs: number) => {
    const { s, requests } = on(sd, row);
    return row.endsWith("-o")
      ? runOpenLoop(process.execPath, open, s.url, requests, { connections: 32, seconds: secs, rate: 1000 })
      : runWrk(s.url, requests, { connections: 32, seconds: secs }, work);
  };
  for (const sd of [a, b]) for (const row of rows) if (row !== "P4" || sd === a) await drive(sd, row, 2);
  const cpu: Record<string, Record<string, number[]>> = {};
  const loop: Record<string, Record<string, number[]>> = {};
  const rate: Record<string, Record<string, number[]>> = {};
  for (let round = 1; round <= opt.rounds; round++)
    for (const row of rows)
      for (const sd of sidesOf(row, round)) {
        const { pid } = on(sd, row).s;
        const before = cpuMicros(pid);
        const loopBefore = loopCpuMicros(pid);
        const r = await drive(sd, row, seconds);
        const per = (cpuMicros(pid) - before) / Math.max(1, r.requests);
        const perLoop = (loopCpuMicros(pid) - loopBefore) / Math.max(1, r.requests);
        const name = nameOf(sd, row);
        ((cpu[row] ??= {})[name] ??= []).push(per);
        ((loop[row] ??= {})[name] ??= []).push(perLoop);
        ((rate[row] ??= {})[name] ??= []).push(r.requests / seconds);
        console.log(
          `round ${round} ${row.padEnd(6)} ${name}: ${Math.round(r.requests / seconds)} req/s, ${per.toFixed(0)} µs CPU/req (event loop ${perLoop.toFixed(0)}), ${r.errors} errors`,
        );
      }
  if (peer && rows.includes("S4")) {
    const p4 = rate.P4!.peer!;
    for (const sd of ["A", "B"]) {
      const s4 = rate.S4![sd]!;
      const ratios = s4.map((x, i) => x / p4[i]!);
      console.log(`S4 ÷ P4 (req/s, per round) ${sd}: ${ratios.map((x) => x.toFixed(2)).join(", ")}`);
    }
    console.log(
      `P4: ${median(cpu.P4!.peer!).toFixed(0)} µs CPU/req (median), event loop ${median(loop.P4!.peer!).toFixed(0)} µs`,
    );
  }
  for (const row of rows) {
    if (row === "P4") continue;
    const [ma, mb, la, lb] = [cpu[row]!.A!, cpu[row]!.B!, loop[row]!.A!, loop[row]!.B!].map(median) as number[];
    console.log(
      `${row}: A ${ma!.toFixed(0)} µs, B ${mb!.toFixed(0)} µs CPU/req (medians); B ÷ A ${(mb! / ma!).toFixed(3)}; ` +
        `event loop A ${la!.toFixed(0)} µs, B ${lb!.toFixed(0)} µs; B ÷ A ${(lb! / la!).toFixed(3)}`,
    );
  }
} finally {
  for (const s of servers) await s.stop();
  for (const c of pgCopies) await c.drop();
  for (const d of [work, ...builds]) rmSync(d, { recursive: true, force: true });
}
