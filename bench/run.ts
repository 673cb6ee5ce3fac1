import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, freemem, loadavg, type as osType, release, tmpdir, totalmem } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { create, toBinary } from "@bufbuild/protobuf";
import Database from "better-sqlite3";
import { GetMessagesForConversationRequestSchema } from "../gen/aiagent/v1/conversation_service_pb.js";
import { buildForBench } from "./lib/build.js";
import { type Dataset, dataset, workingCopy } from "./lib/dataset.js";
import { eachRepTargets, pinnedRatios } from "./lib/each-rep.js";
import {
  chooseGenerator,
  type GrpcSpec,
  generatorVersion,
  type HttpRequestSpec,
  type LoadResult,
  type LoadShape,
  runAutocannon,
  runGrpc,
  runOpenLoop,
  runWrk,
} from "./lib/load.js";
import { canPin, pinRow } from "./lib/pin.js";
import { benchPostgres, copyToPostgres, type PgDataset, settlePostgres } from "./lib/postgres.js";
import { cpuMicros } from "./lib/proc.js";
import { type ServerProcess, servedEnv, startServer } from "./lib/procs.js";
import { chart, ratioOf, type ScenarioResult, type TargetResult, table, targetTable } from "./lib/report.js";
import { type FramePage, frameMix, rereadProfile } from "./lib/reread.js";
import { runBounds } from "./lib/run-bounds.js";
import { median } from "./lib/stats.js";
import { runRetrieval } from "./retrieval.js";

// `npm run bench`: seeds (or reuses) datasets through the service's own storage layer, starts the real service
// (`aiagent serve`, built) and the baselines as child processes, drives every scenario with wrk (gRPC: an HTTP/2
// loop), and reports req/s, latency, server CPU per request and peak RSS, each row against its baseline.

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(HERE, "..");

const { values: opt } = parseArgs({
  options: {
    quick: { type: "boolean", default: false },
    duration: { type: "string" },
    connections: { type: "string", default: "32" },
    reps: { type: "string", default: "1" },
    fresh: { type: "boolean", default: false },
    out: { type: "string" },
    cache: { type: "string" },
    generator: { type: "string" },
    rate: { type: "string", default: "1000" },
    // Comma-separated scenario ids (e.g. "S9m,S2g"): run only these, to look into one of them.
    only: { type: "string" },
    // The pinned rows: PostgreSQL on one core, the service and its load on the other (taskset), against SQLite
    // pinned the same way (bench/lib/pin.ts).
    pinned: { type: "boolean", default: false },
    // The whole-run bound in minutes, for a machine known to be slow (the suite's smoke run passes its own scale).
    "watchdog-minutes": { type: "string" },
  },
  strict: true,
});

const quick = opt.quick!;
const seconds = Number(opt.duration ?? (quick ? 1 : 5));
const connections = Number(opt.connections);
const reps = Number(opt.reps);
// The offered rate of the steady-load (open-loop) list scenarios.
const rate = Number(opt.rate);
// The offered rate of the search rows (Q1): an inbox's searches are people typing, not a machine's polling.
const SEARCH_RATE = 20;
const outDir = resolve(opt.out ?? join(ROOT, "bench", "results"));
const cacheDir = resolve(opt.cache ?? join(ROOT, "node_modules", ".cache", "aiagent-bench"));
const SCALES = quick ? { main: "10k", growth: ["1k"] } : { main: "100k", growth: ["10k", "1m"] };
// Whole-run bound: a stuck child can never hold the machine.
const WATCHDOG_MS =
  (opt["watchdog-minutes"] !== undefined
    ? Number(opt["watchdog-minutes"])
    : (quick ? 3 * reps : 20 + 10 * (reps - 1)) + (opt.pinned ? 3 * reps : 0)) * 60_000;
if (!(WATCHDOG_MS > 0)) throw new Error(`--watchdog-minutes must be a positive number, not ${opt["watchdog-minutes"]}`);

const { started, log, servers, watchdog } = runBounds("bench", WATCHDOG_MS);
// Whether the machine was busy before the run: other work on these cores shows in every number.
const loadBefore = loadavg()[0]!;
/** One line on the PostgreSQL rows: where they ran, or why they did not. */
let pgNote = "";
let buildDir: string | undefined;

/** A scenario: one server, one request rotation (or gRPC call), compared with a baseline row. */
interface Scenario {
  id: string;
  name: string;
  server: ServerProcess;
  kind: "service" | "baseline";
  baseline?: string;
  http?: HttpRequestSpec[];
  grpc?: GrpcSpec;
  /** Set: an open loop at this offered rate (req/s) instead of a closed loop. */
  rate?: number;
  /** The processes whose CPU time the requests cost, when not only `server` (the scale-out rows). */
  cpuPids?: number[];
  /** Set: this many connections instead of the run's (a heavy read, timed one at a time: R1). */
  connections?: number;
  /** Set: at least this many seconds (a heavy read: several must complete to be timed). */
  minSeconds?: number;
  /**
   * Set: the row runs pinned, the service and the load generator on one core and, on PostgreSQL, the database's
   * server processes (this URL's) on the other.
   */
  pinned?: { databaseUrl?: string };
}

async function main(): Promise<void> {
  if (![seconds, connections, reps, rate].every((n) => Number.isFinite(n) && n > 0))
    throw new Error("--duration, --connections, --reps and --rate must be positive numbers");
  if (opt.generator !== undefined && opt.generator !== "wrk" && opt.generator !== "autocannon")
    throw new Error("--generator must be wrk or autocannon");
  const generator = opt.generator === "autocannon" ? "autocannon" : chooseGenerator(log);
  // Built inside the repository (so the packages resolve), one directory per run (so runs never share one).
  buildDir = await buildForBench(ROOT, join(ROOT, "node_modules", ".cache", "aiagent-bench", `build-${process.pid}`));
  log(`built into ${buildDir}; load generator: ${generatorVersion(generator)}`);
  const main = join(buildDir, "src/cli/main.js");

  // The signing keys are encrypted at rest: the seeding child and the production-mode servers share one secret.
  // Production refuses to start without one; this one protects throw-away data only.
  process.env.AIAGENT_SECRETS ??= "bench-only-key-encryption-secret-0123456789";
  const datasets: Record<string, Dataset> = {};
  for (const scale of [SCALES.main, ...SCALES.growth]) {
    datasets[scale] = await dataset({ root: ROOT, buildDir, cacheDir, scale, fresh: opt.fresh!, log });
    const d = datasets[scale]!;
    log(
      `dataset ${scale}: ${d.seed.contacts} contacts, ${d.seed.conversations} conversations, ${d.seed.messages} messages; seeded in ${d.seed.seconds.toFixed(1)} s${d.builtNow ? "" : " (cached)"}`,
    );
  }
  const work = mkdtempSync(join(tmpdir(), "aiagent-bench-"));
  let pgData: PgDataset | undefined;
  try {
    const baseEnv = servedEnv({
      // The fixtures' tokens are issued once, before the first repetition: they must outlive the whole run (a
      // three-repetition run outlasted the default 15 minutes, and its last rows were answered 401).
      AIAGENT_ACCESS_TOKEN_TTL: String(Math.ceil(WATCHDOG_MS / 1000) + 600),
      AIAGENT_ID_TOKEN_TTL: String(Math.ceil(WATCHDOG_MS / 1000) + 600),
    });
    const serve = async (name: string, d: Dataset, env: Record<string, string> = {}) => {
      const db = workingCopy(d, work, name);
      const s = await startServer(name, main, ["serve"], { ...baseEnv, AIAGENT_DB: db, ...env });
      servers.push(s);
      return s;
    };
    const mainData = datasets[SCALES.main]!;
    const full = await serve("service", mainData);
    const off = await serve("service-sync-off", mainData, { AIAGENT_SYNCHRONOUS: "OFF" });
    // The same service with its metrics on (traces off): what observing every RPC costs, next to S1.
    const observed = await serve("service-metrics", mainData, {
      AIAGENT_METRICS_TOKEN: "bench-metrics-token-0123456789",
    });
    const growth: { scale: string; server: ServerProcess; d: Dataset }[] = [];
    for (const scale of SCALES.growth)
      growth.push({ scale, d: datasets[scale]!, server: await serve(`service-${scale}`, datasets[scale]!) });
    log(`service listening at ${full.url} (synchronous=FULL) and ${off.url} (synchronous=OFF)`);

    // The PostgreSQL back end on the same data: two instances on one database, and a balancer in front of one
    // and of both (the scale-out rows). The quick run copies the smallest dataset, so that it stays quick.
    const pgAdmin = await benchPostgres();
    let pgSetup:
      | { d: Dataset; a: ServerProcess; one: ServerProcess; both: ServerProcess; b: ServerProcess }
      | undefined;
    if (!pgAdmin) {
      pgNote =
        "PostgreSQL rows skipped: no PostgreSQL server answers (set AIAGENT_BENCH_DATABASE_URL, or run one on 127.0.0.1:5432)";
      log(pgNote);
    } else {
      const d = quick ? datasets[SCALES.growth[0]!]! : mainData;
      pgData = await copyToPostgres(pgAdmin, d, log);
      const pgUrl = pgData.url;
      // AIAGENT_DB is unused with a database URL (the secret comes from AIAGENT_SECRETS).
      const pgServe = async (name: string) => {
        const s = await startServer(name, main, ["serve"], {
          ...baseEnv,
          AIAGENT_DB: join(work, `${name}.db`),
          AIAGENT_DATABASE_URL: pgUrl,
        });
        servers.push(s);
        return s;
      };
      const a = await pgServe("service-pg");
      const b = await pgServe("service-pg-2");
      const balancer = join(buildDir, "bench/servers/balancer.js");
      const one = await startServer("balancer, one instance", balancer, [a.url], process.env);
      servers.push(one);
      const both = await startServer("balancer, two instances", balancer, [a.url, b.url], process.env);
      servers.push(both);
      pgSetup = { d, a, b, one, both };
      pgNote = `PostgreSQL ${pgData.server}: ${d.scale} dataset copied in ${pgData.seconds.toFixed(1)} s; service-pg at ${a.url}`;
      log(`PostgreSQL instances at ${a.url} and ${b.url}; balancers at ${one.url} (one) and ${both.url} (both)`);
    }

    const fx = await fixtures(full.url, mainData);
    const s1 = fx.samples.map((x) =>
      get(`/get_messages_for_conversation?conversation_id=${x.conversationId}&access_token=${x.accessToken}`),
    );
    const s1Body = await probe(
      full.url,
      s1[0]!,
      (b) => (b as { messages: unknown[] }).messages.length === 20,
      "20 messages",
    );
    const bodyFile = join(work, "s1-response.json");
    writeFileSync(bodyFile, s1Body);
    const bare = await startServer("bare node:http", join(buildDir, "bench/servers/bare.js"), [bodyFile], process.env);
    servers.push(bare);
    const echo = await startServer(
      "connect echo",
      join(buildDir, "bench/servers/connect-echo.js"),
      [bodyFile],
      process.env,
    );
    servers.push(echo);
    // The real peer for the token endpoints, its fixtures (client secret, refresh tokens) written at start.
    const peerFile = join(work, "oidc-peer.json");
    const peer = await startServer(
      "oidc-provider",
      join(buildDir, "bench/servers/oidc-peer.js"),
      [peerFile, String(fx.samples.length)],
      { ...process.env, NODE_ENV: "production" },
    );
    servers.push(peer);
    const px = JSON.parse(readFileSync(peerFile, "utf8")) as PeerFixtures;
    const form = (fields: Record<string, string>, headers: Record<string, string> = {}) =>
      post("/token", new URLSearchParams(fields).toString(), {
        "content-type": "application/x-www-form-urlencoded",
        ...headers,
      });
    const peerIssue = [
      form(
        { grant_type: "client_credentials", resource: px.resource, scope: px.scope },
        { authorization: `Basic ${Buffer.from(`${px.clientId}:${px.clientSecret}`).toString("base64")}` },
      ),
    ];
    const peerRefresh = px.refreshTokens.map((t) =>
      form({ grant_type: "refresh_token", client_id: px.refreshClientId, refresh_token: t }),
    );

    const rpcPath = "/aiagent.v1.ConversationService/GetMessagesForConversation";
    const connectReqs = fx.samples.map((x) =>
      post(rpcPath, JSON.stringify({ conversationId: x.conversationId, accessToken: x.accessToken }), {
        "connect-protocol-version": "1",
      }),
    );
    const first = fx.samples[0]!;
    const grpc: GrpcSpec = {
      path: rpcPath,
      message: toBinary(
        GetMessagesForConversationRequestSchema,
        create(GetMessagesForConversationRequestSchema, {
          conversationId: first.conversationId,
          accessToken: first.accessToken,
        }),
      ),
    };
    // S3: the list variants, in a closed loop (req/s) and at a steady offered rate (the targets).
    const listVariants = (phone: string) => [
      { id: "a", name: "contact list, default", q: "" },
      { id: "u", name: "contact list, filter=unread", q: "&filter=unread" },
      { id: "l", name: "contact list, filter=live", q: "&filter=live" },
      { id: "s2", name: 'contact search, 2 letters "ma"', q: "&search=ma" },
      { id: "s6", name: 'contact search, 6 letters "garcia"', q: "&search=garcia" },
      { id: "s6r", name: "contact search, 6 digits, one contact", q: `&search=${encodeURIComponent(phone)}` },
    ];
    const listRequest = (d: Dataset, token: string, q: string) => [
      get(`/get_contact_conversations?user_email_id=${encodeURIComponent(d.seed.email)}${q}`, {
        authorization: `Bearer ${token}`,
      }),
    ];
    const s3 = (d: Dataset, token: string, phone: string, label: string, server: ServerProcess): Scenario[] =>
      listVariants(phone).map((v) => ({
        id: `S3${v.id}`,
        name: `${v.name} (${label})`,
        server,
        kind: "service",
        baseline: "B0",
        http: listRequest(d, token, v.q),
      }));
    /** The same variants at a fixed offered rate; `tag` tells datasets apart ("" for the main one). */
    const s3Open = (d: Dataset, token: string, phone: string, label: string, server: ServerProcess, tag: string) =>
      listVariants(phone).map(
        (v): Scenario => ({
          id: `S3${v.id}-o${tag}`,
          name: `${v.name} (${label}), ${rate.toLocaleString("en-US")} req/s offered`,
          server,
          kind: "service",
          http: listRequest(d, token, v.q),
          rate,
        }),
      );
    const searchRequests = (token: string) =>
      [
        "query=parcel",
        "query=discount%20code",
        "query=parcel%20canada",
        "query=quetzalcoatl",
        "query=charged%20twice&status=closed",
        "query=deliv",
        "query=opening%20hours&operator=ai_agent",
        "query=return&limit=50",
      ].map((q) => get(`/search_conversations?${q}`, { authorization: `Bearer ${token}` }));
    const users = Array.from(
      { length: 256 },
      (_, i) => `cust_${(fx.samples.length + 1 + i).toString(36).padStart(5, "0")}`,
    );
    const issue = users.map((u) =>
      post(
        "/ai_agent/get_access_token",
        JSON.stringify({
          user_id: u,
          chatbot_id: mainData.seed.chatbot_id,
          client_api_key: mainData.seed.client_api_key,
        }),
      ),
    );
    const refresh = fx.samples.map((x) =>
      post(
        "/ai_agent/refresh_token",
        JSON.stringify({ user_id: x.userId, chatbot_id: mainData.seed.chatbot_id, refresh_token: x.refreshToken }),
      ),
    );
    const sends = fx.samples.map((x) =>
      post(
        `/ai_agent/send_message?access_token=${x.accessToken}`,
        JSON.stringify({
          conversation_id: x.conversationId,
          content: "Do you ship to Canada, and how long does it take?",
        }),
      ),
    );
    // S6 with an idempotency key: each request a new keyed write (the key looked up, then stored with the answer).
    const keyedSends = sends.map((x) => ({ ...x, freshHeader: "idempotency-key" }));
    // The same requests on PostgreSQL, with tokens the PostgreSQL instances issued for their dataset.
    const pgRows:
      | { s1: Scenario; s3a: Scenario; s4: Scenario; s6: Scenario; r1: Scenario; scale: Scenario[] }
      | undefined = pgSetup && (await postgresScenarios(pgSetup));
    const long = mainData.seed.long!;
    const deep = long.messages - 20;
    const page = (offset: number) => [
      get(
        `/get_messages_for_conversation?conversation_id=${long.conversation_id}&access_token=${fx.longToken}&offset=${offset}`,
      ),
    ];
    const k = (n: number) => (n >= 1_000_000 ? `${n / 1_000_000}M` : `${n / 1000}k`);
    const mainK = k(mainData.seed.contacts);

    // S9: the frame's read pattern (bench/lib/reread.ts): a page cache is sized from its re-read profile.
    const frames = [];
    for (const x of fx.samples) {
      const body = await probe(
        full.url,
        readPage({ conversationId: x.conversationId, accessToken: x.accessToken, offset: 0, limit: 100 }),
        () => true,
        "a page",
      );
      frames.push({ ...x, messages: (JSON.parse(body) as { messages: unknown[] }).messages.length });
    }
    const NEW_PAGES = 512;
    const step = Math.max(1, Math.floor((long.messages - 100) / NEW_PAGES));
    const fresh = (i: number) => ({
      conversationId: long.conversation_id,
      accessToken: fx.longToken,
      offset: i * step,
    });
    const framePages = frameMix(frames, fresh, { newPages: NEW_PAGES, pollsPerOpen: 2 });
    const pagesOnce = frameMix(frames, fresh, { newPages: NEW_PAGES, pollsPerOpen: 0 }).filter(
      (x) => x.conversationId === long.conversation_id,
    );
    const CACHE_SIZES = [16, 64, 128, 256, 1024];
    const mixProfile = rereadProfile(framePages, CACHE_SIZES);
    const pageBytes = async (x: FramePage) =>
      Buffer.byteLength(await probe(full.url, readPage(x), () => true, "a page"));
    const frameReread = {
      model: `per frame opened on a new conversation, one re-opened frame reads its newest page and polls its tail twice; ${frames.length} re-opened frames, ${NEW_PAGES} new pages, limit 100`,
      mix: mixProfile,
      once: rereadProfile(pagesOnce, CACHE_SIZES),
      bytes_per_page: {
        new_page: await pageBytes(pagesOnce[0]!),
        reopened_newest_page: await pageBytes(framePages[1]!),
        polled_tail: await pageBytes(framePages[2]!),
      },
    };

    // The bare server at the offered rate: a row of its own, and also measured next to each service row at that rate
    // (below), whose CPU per request issue 49 compares with it.
    const b0o: Scenario = {
      id: "B0-o",
      name: `bare node:http, same JSON body, ${rate.toLocaleString("en-US")} req/s offered`,
      server: bare,
      kind: "baseline",
      http: [get("/")],
      rate,
    };
    // Pairs run next to each other, so a baseline and its scenario see the same background load.
    const groups: Scenario[][] = [
      [
        { id: "B0", name: "bare node:http, same JSON body", server: bare, kind: "baseline", http: [get("/")] },
        { id: "S1", name: "frame read, JSON, 20 messages", server: full, kind: "service", baseline: "B0", http: s1 },
        {
          id: "S1m",
          name: "frame read, JSON, 20 messages, metrics on",
          server: observed,
          kind: "service",
          baseline: "S1",
          http: s1,
        },
        ...(pgRows ? [pgRows.s1] : []),
      ],
      [
        { id: "B1", name: "Connect echo, same build", server: echo, kind: "baseline", http: connectReqs },
        {
          id: "S2c",
          name: "frame read, Connect (HTTP/1.1)",
          server: full,
          kind: "service",
          baseline: "B1",
          http: connectReqs,
        },
      ],
      [
        { id: "B2", name: "gRPC echo, same build", server: echo, kind: "baseline", grpc },
        { id: "S2g", name: "frame read, gRPC (HTTP/2)", server: full, kind: "service", baseline: "B2", grpc },
      ],
      [...s3(mainData, fx.idToken, fx.phoneDigits, mainK, full), ...(pgRows ? [pgRows.s3a] : [])],
      // Q1 (issue 45): search across the account's messages (1M at the main scale) and notes, a rotation of
      // queries: common words, two words that never meet (the index's lists of both are read whole), a word that
      // is nowhere, a filter that drops most hits, a prefix; at a steady offered rate, beside the plain list page at
      // the same rate (S3a's request, this run, this server): its p99 is the baseline's.
      [
        {
          id: "Q1b-o",
          name: `contact list page (${mainK}), ${SEARCH_RATE} req/s offered (search's baseline)`,
          server: full,
          kind: "baseline",
          http: listRequest(mainData, fx.idToken, ""),
          rate: SEARCH_RATE,
        },
        {
          id: "Q1-o",
          name: `search across ${k(mainData.seed.messages)} messages, ${SEARCH_RATE} req/s offered`,
          server: full,
          kind: "service",
          baseline: "Q1b-o",
          http: searchRequests(fx.idToken),
          rate: SEARCH_RATE,
        },
      ],
      [
        ...s3Open(mainData, fx.idToken, fx.phoneDigits, mainK, full, ""),
        // The fixed cost of a request at this rate, beside the list's: a server that does nothing, and a frame read
        // (a remembered page behind one revocation check), both woken once per request as the lists are.
        b0o,
        {
          id: "S1-o",
          name: `frame read, JSON, 20 messages, ${rate.toLocaleString("en-US")} req/s offered`,
          server: full,
          kind: "service",
          http: s1,
          rate,
        },
      ],
      [
        { id: "S4o", name: "get_access_token, synchronous=OFF", server: off, kind: "baseline", http: issue },
        {
          id: "P4",
          name: "oidc-provider client_credentials, ES256 JWT",
          server: peer,
          kind: "baseline",
          http: peerIssue,
        },
        {
          id: "S4",
          name: "get_access_token, synchronous=FULL",
          server: full,
          kind: "service",
          baseline: "S4o",
          http: issue,
        },
        ...(pgRows ? [pgRows.s4] : []),
      ],
      [
        {
          id: "P5",
          name: "oidc-provider refresh grant, ES256 JWT",
          server: peer,
          kind: "baseline",
          http: peerRefresh,
        },
        { id: "S5", name: "refresh_token", server: full, kind: "service", baseline: "P5", http: refresh },
      ],
      [
        {
          id: "S6o",
          name: "send_message, built-in agent, synchronous=OFF",
          server: off,
          kind: "baseline",
          http: sends,
        },
        {
          id: "S6",
          name: "send_message, built-in agent, synchronous=FULL",
          server: full,
          kind: "service",
          baseline: "S6o",
          http: sends,
        },
        {
          id: "S6k",
          name: "send_message, a fresh Idempotency-Key each, synchronous=FULL",
          server: full,
          kind: "service",
          baseline: "S6",
          http: keyedSends,
        },
        ...(pgRows ? [pgRows.s6] : []),
      ],
      [
        {
          id: "S7a",
          name: `messages page, offset 0 (of ${k(long.messages)})`,
          server: full,
          kind: "service",
          baseline: "B0",
          http: page(0),
        },
        {
          id: "S7b",
          name: `messages page, offset ${deep.toLocaleString("en-US")}`,
          server: full,
          kind: "service",
          baseline: "S7a",
          http: page(deep),
        },
      ],
      [
        {
          id: "S9n",
          name: "frame reads, 100 messages, pages read once",
          server: full,
          kind: "service",
          baseline: "B0",
          http: pagesOnce.map(readPage),
        },
        {
          id: "S9m",
          name: `frame reads, 100 messages, ${Math.round(mixProfile.reread_share * 100)}% re-reads`,
          server: full,
          kind: "service",
          baseline: "S9n",
          http: framePages.map(readPage),
        },
      ],
    ];
    const growthRows: Scenario[] = [];
    for (const g of growth) {
      const token = await idToken(g.server.url, g.d);
      // The steady-load list targets hold at the largest dataset too.
      if (g === growth.at(-1))
        groups.push(
          s3Open(
            g.d,
            token,
            await phoneDigits(g.server.url, g.d, token),
            k(g.d.seed.contacts),
            g.server,
            `-${g.scale}`,
          ),
        );
      growthRows.push({
        id: `S8-${g.scale}`,
        name: `contact list at ${k(g.d.seed.contacts)} contacts`,
        server: g.server,
        kind: "service",
        baseline: "S3a",
        http: [
          get(`/get_contact_conversations?user_email_id=${encodeURIComponent(g.d.seed.email)}`, {
            authorization: `Bearer ${token}`,
          }),
        ],
      });
    }
    // R1: GetReport over a year of the chatbot's conversations (the seed spreads them over its last 90 days), one
    // request at a time: its time is the report's latency, not a throughput. At the main scale on SQLite and on
    // PostgreSQL (the same data), and at each growth scale.
    const reportRows: Scenario[] = [
      reportRow(`R1-${SCALES.main}`, `GetReport, a year of ${mainK} conversations`, full, mainData, fx.idToken, "S3a"),
      ...(pgRows ? [pgRows.r1] : []),
    ];
    for (const g of growth)
      reportRows.push(
        reportRow(
          `R1-${g.scale}`,
          `GetReport, a year of ${k(g.d.seed.conversations)} conversations`,
          g.server,
          g.d,
          await idToken(g.server.url, g.d),
          `S8-${g.scale}`,
        ),
      );
    groups.push(growthRows, reportRows);
    if (pgRows) groups.push(pgRows.scale);
    // The pinned rows (`--pinned`): PostgreSQL's server processes on core 0, the service and its load on core 1,
    // each row against the same request on SQLite pinned the same way (core 0 then idle). What the PostgreSQL back
    // end costs the service's own core, with the database's work off it; reported, no target.
    if (opt.pinned) {
      if (!pgRows || !pgData) log("pinned rows skipped: they need the PostgreSQL rows");
      else if (cpus().length < 2 || !canPin()) log("pinned rows skipped: they need two cores and taskset (util-linux)");
      else {
        const onPg = { databaseUrl: pgData.url };
        const sqliteRow = (id: string, name: string, http: HttpRequestSpec[]): Scenario => ({
          id: `${id}-pin`,
          name: `${name}, pinned: service and load on core 1`,
          server: full,
          kind: "baseline",
          http,
          pinned: {},
        });
        const pgRow = (sc: Scenario, on: string): Scenario => ({
          ...sc,
          id: `${sc.id}-pin`,
          name: `${sc.name}, pinned: PostgreSQL on core 0, service and load on core 1`,
          baseline: `${on}-pin`,
          pinned: onPg,
        });
        groups.push(
          [sqliteRow("S1", "frame read, JSON, 20 messages", s1), pgRow(pgRows.s1, "S1")],
          [sqliteRow("S4", "get_access_token", issue), pgRow(pgRows.s4, "S4")],
          [sqliteRow("S6", "send_message, built-in agent", sends), pgRow(pgRows.s6, "S6")],
        );
      }
    }

    if (opt.only) {
      const only = new Set(opt.only.split(","));
      for (const g of groups) g.splice(0, g.length, ...g.filter((sc) => only.has(sc.id)));
    }

    // Every request rotation is checked once before it is measured: a benchmark of error answers tells nothing.
    for (const sc of groups.flat()) if (sc.http) await probe(sc.server.url, sc.http[0]!, () => true, "200");
    // S6k measures the key only if the service honours it: the same key twice answers the first message.
    if (groups.flat().some((sc) => sc.id === "S6k")) await probeKey(full.url, keyedSends[0]!);

    const shape: LoadShape = { connections, seconds };
    const samples = new Map<string, { r: LoadResult; cpu: number }[]>();
    // Each service row at the offered rate, with the bare server's CPU per request measured right next to it (before
    // it in even repetitions, after it in odd ones): the ratio issue 49 sets a bound on, with both sides under the
    // same background load. A B0-o measured once per repetition, a minute or more away, moved the ratio by a third.
    const adjacent = new Map<string, number[]>();
    const pairedWithB0o = (sc: Scenario) => sc.kind === "service" && sc.rate === rate;
    const built = buildDir;
    const logRow = (id: string, r: { r: LoadResult; cpu: number }, server: ServerProcess) =>
      log(
        `${id.padEnd(6)} ${Math.round(r.r.rps).toLocaleString("en-US").padStart(8)} req/s  p50 ${(r.r.p50Us / 1000).toFixed(2)} ms  p99 ${(r.r.p99Us / 1000).toFixed(2)} ms  ${Math.round(r.cpu)} µs CPU/req${r.r.errors ? `  ${r.r.errors} errors` : ""}${r.r.unanswered ? `  ${r.r.unanswered} unanswered` : ""}  peak RSS so far ${(server.peakRss() / 1e6).toFixed(0)} MB`,
      );
    for (let rep = 0; rep < reps; rep++) {
      for (const group of groups) {
        // Alternate the order inside each pair from one repetition to the next.
        const ordered = rep % 2 === 1 ? [...group].reverse() : group;
        for (const sc of ordered) {
          const paired = pairedWithB0o(sc);
          // A PostgreSQL row starts with nothing of the server's own left running beside it (settlePostgres), and
          // warmed up even in a quick run: the wait may outlast the pool's idle timeout (10 s), whose connections the
          // row would otherwise open again while measured.
          const settle = pgData && pgSetup && pgOn(pgSetup, sc) ? pgData.url : undefined;
          if (settle) {
            const s = await settlePostgres(settle);
            log(
              `${sc.id}: PostgreSQL settled: ${s.running} vacuums or analyzes running, waited ${(s.waitedMs / 1000).toFixed(1)} s${s.timedOut ? " (bound reached)" : ""}; VACUUM ANALYZE ${(s.vacuumMs / 1000).toFixed(1)} s`,
            );
          }
          const bareNow = async () => {
            const b = await measure(b0o, shape, generator, built, work);
            logRow("B0-o", b, bare);
            return b.cpu;
          };
          const before = paired && rep % 2 === 0 ? await bareNow() : undefined;
          const r = await measure(sc, shape, generator, buildDir, work, settle !== undefined);
          if (!samples.has(sc.id)) samples.set(sc.id, []);
          samples.get(sc.id)!.push(r);
          logRow(sc.id, r, sc.server);
          if (!paired) continue;
          const base = before ?? (await bareNow());
          adjacent.set(sc.id, [...(adjacent.get(sc.id) ?? []), base]);
          log(`${sc.id} ÷ B0-o measured next to it, CPU per request: ${(r.cpu / base).toFixed(2)}`);
        }
      }
    }
    const results: ScenarioResult[] = groups.flat().map((sc) => {
      const xs = samples.get(sc.id)!;
      return {
        id: sc.id,
        name: sc.name,
        server: sc.server.name,
        kind: sc.kind,
        baseline: sc.baseline,
        rate: sc.rate,
        rps: median(xs.map((x) => x.r.rps)),
        p50Us: median(xs.map((x) => x.r.p50Us)),
        p99Us: median(xs.map((x) => x.r.p99Us)),
        cpuUsPerReq: median(xs.map((x) => x.cpu)),
        errors: xs.reduce((n, x) => n + x.r.errors, 0),
        unanswered: sc.rate ? xs.reduce((n, x) => n + (x.r.unanswered ?? 0), 0) : undefined,
        requests: xs.reduce((n, x) => n + x.r.requests, 0),
        reps: xs.length,
        perRep: xs.map((x) => ({ rps: x.r.rps, cpuUsPerReq: x.cpu, failed: x.r.errors + (x.r.unanswered ?? 0) })),
        ...(adjacent.has(sc.id) ? { adjacentB0oCpuUsPerReq: adjacent.get(sc.id)! } : {}),
      };
    });

    const rss: Record<string, number> = {};
    for (const s of servers.splice(0)) rss[s.name] = await s.stop();
    const serviceRss = Math.max(
      ...Object.entries(rss)
        .filter(([n]) => n.startsWith("service"))
        .map(([, v]) => v),
    );
    const targets = evaluate(
      results,
      serviceRss,
      growth.map((g) => g.scale),
    );
    // The retrieval rows (issue 42): in process, after the servers above have stopped.
    const retrieval =
      opt.only && !opt.only.split(",").includes("retrieval") ? undefined : await runRetrieval({ quick, log });
    if (retrieval) targets.push(...retrieval.targets);
    report({ results, targets, rss, datasets, generator, frameReread, retrieval: retrieval?.result });
  } finally {
    for (const s of servers.splice(0)) await s.stop();
    await pgData?.drop();
    rmSync(work, { recursive: true, force: true });
    rmSync(buildDir, { recursive: true, force: true });
  }
}

/** Whether a row is served by the PostgreSQL instances (directly or through a balancer). */
function pgOn(
  p: { a: ServerProcess; b: ServerProcess; one: ServerProcess; both: ServerProcess },
  sc: Scenario,
): boolean {
  return sc.server === p.a || sc.server === p.b || sc.server === p.one || sc.server === p.both;
}

/** The PostgreSQL rows: S1, S3a, S4 and S6 on one PostgreSQL instance, and the scale-out pair through the balancer. */
async function postgresScenarios(p: {
  d: Dataset;
  a: ServerProcess;
  b: ServerProcess;
  one: ServerProcess;
  both: ServerProcess;
}): Promise<{ s1: Scenario; s3a: Scenario; s4: Scenario; s6: Scenario; r1: Scenario; scale: Scenario[] }> {
  const { d, a } = p;
  const fx = await fixtures(a.url, d);
  const read = fx.samples.map((x) =>
    get(`/get_messages_for_conversation?conversation_id=${x.conversationId}&access_token=${x.accessToken}`),
  );
  await probe(a.url, read[0]!, (b) => (b as { messages: unknown[] }).messages.length === 20, "20 messages");
  const users = Array.from({ length: 256 }, (_, i) => `pg_${i.toString(36).padStart(5, "0")}`);
  const issue = users.map((u) =>
    post(
      "/ai_agent/get_access_token",
      JSON.stringify({ user_id: u, chatbot_id: d.seed.chatbot_id, client_api_key: d.seed.client_api_key }),
    ),
  );
  const sends = fx.samples.map((x) =>
    post(
      `/ai_agent/send_message?access_token=${x.accessToken}`,
      JSON.stringify({
        conversation_id: x.conversationId,
        content: "Do you ship to Canada, and how long does it take?",
      }),
    ),
  );
  const on = `PostgreSQL, ${d.scale}`;
  return {
    s1: {
      id: "S1-pg",
      name: `frame read, JSON, 20 messages (${on})`,
      server: a,
      kind: "service",
      baseline: "S1",
      http: read,
    },
    s3a: {
      id: "S3a-pg",
      name: `contact list, default (${on})`,
      server: a,
      kind: "service",
      baseline: "S3a",
      http: [
        get(`/get_contact_conversations?user_email_id=${encodeURIComponent(d.seed.email)}`, {
          authorization: `Bearer ${fx.idToken}`,
        }),
      ],
    },
    s4: { id: "S4-pg", name: `get_access_token (${on})`, server: a, kind: "service", baseline: "S4", http: issue },
    s6: {
      id: "S6-pg",
      name: `send_message, built-in agent (${on})`,
      server: a,
      kind: "service",
      baseline: "S6",
      http: sends,
    },
    r1: reportRow(
      "R1-pg",
      `GetReport, a year of ${d.seed.conversations / 1000}k conversations (${on})`,
      a,
      d,
      fx.idToken,
      `R1-${d.scale}`,
    ),
    scale: [
      {
        id: "X1-pg",
        name: `frame read through a balancer, one instance (${on})`,
        server: p.one,
        kind: "service",
        baseline: "S1-pg",
        http: read,
        cpuPids: [p.one.pid, a.pid],
      },
      {
        id: "X2-pg",
        name: `frame read through a balancer, two instances (${on})`,
        server: p.both,
        kind: "service",
        baseline: "X1-pg",
        http: read,
        cpuPids: [p.both.pid, a.pid, p.b.pid],
      },
    ],
  };
}

/** R1: one GetReport over the year up to today (Paris time), timed one request at a time. */
function reportRow(
  id: string,
  name: string,
  server: ServerProcess,
  d: Dataset,
  idToken: string,
  baseline: string,
): Scenario {
  const today = new Date().toISOString().slice(0, 10);
  const yearAgo = new Date(Date.now() - 365 * 86_400_000).toISOString().slice(0, 10);
  return {
    id,
    name,
    server,
    kind: "service",
    baseline,
    connections: 1,
    // A run shorter than a report (or wrk's 5 s timeout) times none; the quick run only checks it answers.
    minSeconds: quick ? undefined : 10,
    http: [
      get(`/v1/account/reports?chatbot_id=${d.seed.chatbot_id}&from=${yearAgo}&to=${today}&time_zone=Europe%2FParis`, {
        authorization: `Bearer ${idToken}`,
      }),
    ],
  };
}

/** What the oidc-provider peer wrote at start (bench/servers/oidc-peer.ts). */
interface PeerFixtures {
  resource: string;
  scope: string;
  clientId: string;
  clientSecret: string;
  refreshClientId: string;
  refreshTokens: string[];
}

/** A frame's page read on the JSON route. */
function readPage(x: { conversationId: string; accessToken: string; offset: number; limit: number }): HttpRequestSpec {
  return get(
    `/get_messages_for_conversation?conversation_id=${x.conversationId}&access_token=${x.accessToken}&offset=${x.offset}&limit=${x.limit}`,
  );
}

function get(path: string, headers: Record<string, string> = {}): HttpRequestSpec {
  return { method: "GET", path, headers };
}
function post(path: string, body: string, headers: Record<string, string> = {}): HttpRequestSpec {
  return { method: "POST", path, body, headers: { "content-type": "application/json", ...headers } };
}

/** Sends one request of a rotation and insists on a 200 (and, if given, a check of the JSON body). */
async function probe(base: string, r: HttpRequestSpec, ok: (body: unknown) => boolean, what: string): Promise<string> {
  const res = await fetch(base + r.path, {
    method: r.method,
    headers: r.headers,
    body: r.body,
    signal: AbortSignal.timeout(10_000),
  });
  const text = await res.text();
  if (
    res.status !== 200 ||
    !ok(res.headers.get("content-type")?.includes("json") ? (JSON.parse(text) as unknown) : text)
  ) {
    throw new Error(
      `probe ${r.method} ${r.path.split("?")[0]} expected ${what}, got ${res.status}: ${text.slice(0, 300)}`,
    );
  }
  return text;
}

/** Sends a keyed request twice with one key; both answers must name the same stored message. */
async function probeKey(base: string, r: HttpRequestSpec): Promise<void> {
  const headers = { ...r.headers, [r.freshHeader!]: `bench-probe-${process.pid}-${Date.now()}` };
  const ids = [];
  for (let i = 0; i < 2; i++) {
    const text = await probe(base, { ...r, headers }, () => true, "200");
    ids.push((JSON.parse(text) as { data: { user_message: { message_id: string } } }).data.user_message.message_id);
  }
  if (ids[0] !== ids[1]) throw new Error(`probe: a retried key wrote a second message (${ids.join(", ")})`);
}

async function postJson(base: string, path: string, body: unknown): Promise<Record<string, unknown>> {
  const res = await fetch(base + path, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
  const json = (await res.json()) as Record<string, unknown>;
  if (res.status !== 200) throw new Error(`${path}: ${res.status} ${JSON.stringify(json)}`);
  return json.data as Record<string, unknown>;
}

async function idToken(base: string, d: Dataset): Promise<string> {
  const r = await postJson(base, "/get_id_token", {
    user_email_id: d.seed.email,
    client_api_key: d.seed.client_api_key,
  });
  return r.idToken as string;
}

/** Tokens the scenarios send, made through the service's own endpoints. */
async function fixtures(base: string, d: Dataset) {
  const samples: { userId: string; conversationId: string; accessToken: string; refreshToken: string }[] = [];
  for (const s of d.seed.samples) {
    const t = await postJson(base, "/ai_agent/get_access_token", {
      user_id: s.user_id,
      chatbot_id: d.seed.chatbot_id,
      client_api_key: d.seed.client_api_key,
    });
    samples.push({
      userId: s.user_id,
      conversationId: s.conversation_id,
      accessToken: t.access_token as string,
      refreshToken: t.refresh_token as string,
    });
  }
  const long = await postJson(base, "/ai_agent/get_access_token", {
    user_id: d.seed.long!.user_id,
    chatbot_id: d.seed.chatbot_id,
    client_api_key: d.seed.client_api_key,
  });
  const id = await idToken(base, d);
  return { samples, longToken: long.access_token as string, idToken: id, phoneDigits: await phoneDigits(base, d, id) };
}

/** Six digits of one contact's phone number: a search that matches (nearly) one contact. */
async function phoneDigits(base: string, d: Dataset, id: string): Promise<string> {
  const someone = `cust_${Math.floor(d.seed.contacts * 0.61)
    .toString(36)
    .padStart(5, "0")}`;
  const res = await fetch(
    `${base}/get_contact_conversations?user_email_id=${encodeURIComponent(d.seed.email)}&search=${someone}`,
    { headers: { authorization: `Bearer ${id}` } },
  );
  const found = ((await res.json()) as { data: { data: { contacts: { phone_number: string }[] } } }).data.data
    .contacts[0];
  if (!found) throw new Error(`no contact ${someone} in the dataset`);
  return found.phone_number.replace(/\D/g, "").slice(-6);
}

/** One measured run: a warm-up (full runs), then the load, with the server's CPU time read around it. */
async function measure(
  sc: Scenario,
  shape: LoadShape,
  generator: string,
  buildDir: string,
  work: string,
  warm = false,
): Promise<{ r: LoadResult; cpu: number }> {
  const drive = (s: LoadShape) =>
    sc.rate
      ? runOpenLoop(process.execPath, join(buildDir, "bench/lib/open-loop-child.js"), sc.server.url, sc.http!, {
          ...s,
          rate: sc.rate,
        })
      : sc.grpc
        ? runGrpc(process.execPath, join(buildDir, "bench/lib/grpc-child.js"), sc.server.url, sc.grpc, s)
        : generator === "wrk"
          ? runWrk(sc.server.url, sc.http!, s, work)
          : runAutocannon(
              process.execPath,
              join(buildDir, "bench/lib/autocannon-child.js"),
              sc.server.url,
              sc.http!,
              s,
            );
  if (sc.connections !== undefined) shape = { ...shape, connections: sc.connections };
  if (sc.minSeconds !== undefined) shape = { ...shape, seconds: Math.max(shape.seconds, sc.minSeconds) };
  if (!quick || sc.pinned || warm) await drive({ ...shape, seconds: 1 });
  const pids = sc.cpuPids ?? [sc.server.pid];
  // Pinned after a warm-up, which opened the service's PostgreSQL connections (their server processes are pinned).
  const unpin = sc.pinned && (await pinRow(pids, sc.pinned.databaseUrl, { service: "1", postgres: "0" }));
  try {
    if (unpin) await drive({ ...shape, seconds: 1 });
    const cpuNow = () => pids.reduce((n, pid) => n + cpuMicros(pid), 0);
    let before = cpuNow();
    let r = await drive(shape);
    // A window shorter than one answer (a cold, heavy read such as R1's in a quick run on a loaded machine) timed
    // nothing: drive it again, twice as long each time, a few times, rather than report 0 req/s.
    for (let s = shape.seconds * 2; r.requests === 0 && s <= shape.seconds * 16; s *= 2) {
      before = cpuNow();
      r = await drive({ ...shape, seconds: s });
    }
    const cpu = (cpuNow() - before) / Math.max(1, r.requests);
    sc.server.peakRss();
    return { r, cpu };
  } finally {
    if (unpin) unpin();
  }
}

/** The issue's targets, judged on this run's numbers. */
function evaluate(results: ScenarioResult[], serviceRss: number, growth: string[]): TargetResult[] {
  const by = (id: string) => results.find((r) => r.id === id);
  const out: TargetResult[] = [];
  // A row with failed requests measured something else (a fast 401 is not a frame read): no target is met on it.
  const failed = (...rows: (ScenarioResult | undefined)[]) =>
    rows.reduce((n, r) => n + (r ? r.errors + (r.unanswered ?? 0) : 0), 0);
  const flagged = (t: TargetResult, ...rows: (ScenarioResult | undefined)[]): TargetResult => {
    const n = failed(...rows);
    return n === 0 ? t : { ...t, measured: `${t.measured} (${n} failed requests)`, score: 0, met: false };
  };
  const ratioTarget = (name: string, id: string, min: number, label: string) => {
    const r = by(id);
    const ratio = r && ratioOf(r, results);
    if (ratio === undefined) return;
    out.push(
      flagged(
        { name, rule: `${label} ≥ ${min}`, measured: `${ratio.toFixed(2)}`, score: ratio / min, met: ratio >= min },
        r,
        r?.baseline === undefined ? undefined : by(r.baseline),
      ),
    );
  };
  ratioTarget("S1 JSON frame read", "S1", 0.25, "req/s ÷ bare node:http");
  // Issue 32: a year's report stays fast at 1M conversations (one request at a time: its latency is its time).
  for (const r of results.filter((x) => x.id.startsWith("R1-"))) {
    // No answer within the run (wrk gives up at 5 s) is a miss, not a time of 0.
    const answered = r.requests > 0 && r.p50Us > 0;
    out.push({
      name: `R1 ${r.name}`,
      rule: "one report's time (p50) ≤ 1 s",
      measured: answered ? `${(r.p50Us / 1e6).toFixed(2)} s` : "no answer within 5 s",
      score: answered ? 1e6 / r.p50Us : 0,
      met: answered && r.p50Us <= 1e6,
    });
  }
  ratioTarget("S1 stretch", "S1", 0.4, "req/s ÷ bare node:http");
  // Issue 45: a search across 1M messages answers within 50 ms at p99.
  const q1 = by("Q1-o");
  if (q1)
    out.push(
      flagged(
        {
          name: `Q1 ${q1.name}`,
          rule: "p99 ≤ 50 ms",
          measured: `${(q1.p99Us / 1000).toFixed(2)} ms (list page at the same rate: ${((by("Q1b-o")?.p99Us ?? 0) / 1000).toFixed(2)} ms)`,
          score: 50_000 / Math.max(1, q1.p99Us),
          met: q1.p99Us <= 50_000,
        },
        q1,
      ),
    );
  ratioTarget("S2 Connect frame read", "S2c", 0.9, "req/s ÷ Connect echo");
  ratioTarget("S1 on PostgreSQL", "S1-pg", 0.5, "req/s ÷ S1 on SQLite");
  ratioTarget("S2 gRPC frame read", "S2g", 0.8, "req/s ÷ gRPC echo");
  // S3: at a steady offered rate, every variant's p99 and CPU per request, and the 6-letter search's CPU.
  const listsOffered = results.filter((x) => x.rate !== undefined && x.id.startsWith("S3"));
  for (const r of listsOffered) {
    const where = r.id.includes("-o-") ? ` at ${r.id.split("-o-")[1]}` : "";
    const variant = r.name.replace(/^contact /, "").replace(/ \(.*$/, "");
    out.push({
      name: `S3 ${variant}${where}`,
      rule: `at ${r.rate!.toLocaleString("en-US")} req/s offered: p99 ≤ 5 ms`,
      measured: `${(r.p99Us / 1000).toFixed(2)} ms`,
      score: 5000 / Math.max(1, r.p99Us),
      met: r.p99Us <= 5000,
    });
    // (The absolute 150 µs of CPU per request is withdrawn by issue 49: each row's CPU against B0-o's, below.)
  }
  for (const tag of new Set(listsOffered.map((x) => x.id.replace(/^S3[a-z0-9]+/, "")))) {
    const plain = by(`S3a${tag}`);
    const search = by(`S3s6${tag}`);
    if (!plain || !search) continue;
    const x = search.cpuUsPerReq / plain.cpuUsPerReq;
    out.push({
      name: `S3 6-letter search vs list${tag.startsWith("-o-") ? ` at ${tag.slice(3)}` : ""}`,
      rule: "CPU per request ≤ 2× a plain list page's",
      measured: `${x.toFixed(2)}×`,
      score: 2 / x,
      met: x <= 2,
    });
  }
  // req/s against another row's (CPU per request beside it).
  const pairTarget = (name: string, id: string, otherId: string, min: number, other: string) => {
    const r = by(id);
    const p = by(otherId);
    if (!r || !p) return;
    const x = r.rps / p.rps;
    out.push(
      flagged(
        {
          name,
          rule: `req/s ≥ ${min}× ${other}`,
          measured: `${x.toFixed(2)}× (CPU/req ${(r.cpuUsPerReq / p.cpuUsPerReq).toFixed(2)}×)`,
          score: x / min,
          met: x >= min,
        },
        r,
        p,
      ),
    );
  };
  const s1 = by("S1");
  const s1m = by("S1m");
  if (s1 && s1m) {
    const cost = s1m.cpuUsPerReq / s1.cpuUsPerReq;
    out.push({
      name: "S1 observed (metrics on, traces off)",
      rule: "CPU per request ÷ S1's ≤ 1.02",
      measured: `${cost.toFixed(3)}×`,
      score: 1.02 / cost,
      met: cost <= 1.02,
    });
  }
  // Issue 49: the token paths against the peer, the lists and the frame read against the bare server, PostgreSQL's
  // client cost against SQLite's, each in every repetition (bench/lib/each-rep.ts; they replace issue 34's medians).
  out.push(...eachRepTargets(results));
  ratioTarget("S4 get_access_token durable", "S4", 0.5, "FULL req/s ÷ OFF req/s");
  ratioTarget("S6 send_message durable", "S6", 0.5, "FULL req/s ÷ OFF req/s");
  // Issue 28: the idempotency key costs under 5 % of S6.
  pairTarget("S6k idempotency key cost", "S6k", "S6", 0.95, "S6's (a fresh key on every send)");
  const s7a = by("S7a");
  const s7b = by("S7b");
  if (s7a && s7b) {
    const slower = s7a.rps / s7b.rps;
    out.push({
      name: "S7 deep page",
      rule: "req/s at offset 0 ÷ req/s deep ≤ 1.5",
      measured: `${slower.toFixed(2)}×`,
      score: 1.5 / slower,
      met: slower <= 1.5,
    });
  }
  const big = growth[growth.length - 1];
  const s8 = big && by(`S8-${big}`);
  const s3a = by("S3a");
  if (s8 && s3a && big === "1m") {
    const g = s8.p99Us / s3a.p99Us;
    out.push({
      name: "S8 growth 100k → 1M",
      rule: "p99 at 1M ÷ p99 at 100k ≤ 2",
      measured: `${g.toFixed(2)}×`,
      score: 2 / g,
      met: g <= 2,
    });
  }
  out.push({
    name: "memory",
    rule: "peak RSS of every service process ≤ 250 MB",
    measured: `${(serviceRss / 1e6).toFixed(0)} MB`,
    score: 250e6 / serviceRss,
    met: serviceRss <= 250e6,
  });
  return out;
}

/** The pinned rows' ratios, one line each (nothing when the run had none). */
function pinnedLines(rows: { name: string; ratios: number[] }[]): string {
  return rows
    .map((p) => `Pinned, ${p.name}, each repetition: ${p.ratios.map((x) => x.toFixed(2)).join(", ")}\n`)
    .join("");
}

function peerVersion(): string {
  return (
    JSON.parse(readFileSync(join(ROOT, "node_modules/oidc-provider/package.json"), "utf8")) as { version: string }
  ).version;
}

function sqliteVersion(): string {
  const db = new Database(":memory:");
  const v = (db.prepare("SELECT sqlite_version() AS v").get() as { v: string }).v;
  db.close();
  return v;
}

function report(r: {
  results: ScenarioResult[];
  targets: TargetResult[];
  rss: Record<string, number>;
  datasets: Record<string, Dataset>;
  generator: string;
  frameReread: unknown;
  retrieval: unknown;
}): void {
  const machine = {
    cpu: cpus()[0]?.model ?? "unknown",
    cores: cpus().length,
    memory_gb: Math.round(totalmem() / 1e9),
    free_memory_gb: Math.round(freemem() / 1e9),
    os: `${osType()} ${release()}`,
    node: process.version,
    sqlite: sqliteVersion(),
    load_average_before: loadBefore,
  };
  const date = new Date().toISOString();
  const seeding = Object.fromEntries(
    Object.entries(r.datasets).map(([scale, d]) => [
      scale,
      {
        contacts: d.seed.contacts,
        conversations: d.seed.conversations,
        messages: d.seed.messages,
        seconds: d.seed.seconds,
        built_this_run: d.builtNow,
      },
    ]),
  );
  const json = {
    date,
    mode: quick ? "quick" : "full",
    machine,
    load: {
      generator: generatorVersion(r.generator as "wrk"),
      connections,
      open_loop_rate: rate,
      seconds_per_run: seconds,
      reps,
      warmup_seconds: quick ? 0 : 1,
    },
    seeding,
    peak_rss_bytes: r.rss,
    peer: `oidc-provider ${peerVersion()}`,
    frame_reread: r.frameReread,
    retrieval: r.retrieval ?? null,
    postgres: pgNote,
    scenarios: r.results.map((x) => ({ ...x, ratio_to_baseline: ratioOf(x, r.results) ?? null })),
    targets: r.targets,
    // Issue 49 asks these reported, with no target: req/s on PostgreSQL ÷ SQLite, both pinned, each repetition.
    pinned_ratios: pinnedRatios(r.results),
    wall_seconds: (Date.now() - started) / 1000,
  };
  mkdirSync(outDir, { recursive: true });
  const stamp = date.replace(/[:]/g, "-").replace(/\..+$/, "");
  const file = join(outDir, `${stamp}${quick ? "-quick" : ""}.json`);
  writeFileSync(file, `${JSON.stringify(json, null, 2)}\n`);
  const title = `aiagent ${quick ? "quick " : ""}benchmark, ${date.slice(0, 10)}: ${machine.cores} × ${machine.cpu}, Node ${process.version}`;
  writeFileSync(join(outDir, quick ? "latest-quick.svg" : "latest.svg"), chart(r.results, r.targets, title));
  const rssLine = Object.entries(r.rss)
    .map(([n, v]) => `${n} ${(v / 1e6).toFixed(0)} MB`)
    .join(", ");
  const seedLine = Object.entries(seeding)
    .map(([s, x]) => `${s}: ${x.seconds.toFixed(1)} s${x.built_this_run ? "" : " (cached)"}`)
    .join(", ");
  process.stdout.write(
    `\n${table(r.results)}\n\n${targetTable(r.targets)}\n\nPeak RSS: ${rssLine}\nSeeding: ${seedLine}\n` +
      `Machine: ${machine.cores} × ${machine.cpu}, ${machine.memory_gb} GB, ${machine.os}, Node ${machine.node}, SQLite ${machine.sqlite}; load average ${loadBefore.toFixed(2)} before the run\n` +
      `Load: ${json.load.generator}, ${connections} connections, ${seconds} s per run × ${reps}, loopback; ` +
      `open loop at ${rate} req/s (at most ${connections} connections); peer ${json.peer}\n` +
      pinnedLines(json.pinned_ratios) +
      `${pgNote}\nFrame re-reads: ${JSON.stringify(r.frameReread)}\nWrote ${file}\n`,
  );
}

main()
  .then(() => {
    clearTimeout(watchdog);
    process.exit(0);
  })
  .catch(async (e: unknown) => {
    log(`failed: ${(e as Error).stack ?? String(e)}`);
    for (const s of servers.splice(0)) await s.stop();
    if (buildDir) rmSync(buildDir, { recursive: true, force: true });
    process.exit(1);
  });
