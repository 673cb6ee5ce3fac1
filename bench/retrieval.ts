import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import { constants, PerformanceObserver } from "node:perf_hooks";
import { fileURLToPath, pathToFileURL } from "node:url";
import { buildApp } from "../src/app.js";
import { loadConfig } from "../src/config.js";
import type { AccountCaller } from "../src/domain/caller.js";
import { chunkPage } from "../src/domain/knowledge/chunking.js";
import { KnowledgeService } from "../src/domain/knowledge/knowledge-service.js";
import type { ChunkInput } from "../src/domain/knowledge/source.js";
import { ExtractWorker } from "../src/knowledge/worker-pool.js";
import { createLogger } from "../src/log.js";
import { openSqliteStore } from "../src/storage/sqlite/store.js";
import { makePdf } from "../test/helpers/documents.js";
import type { HttpRequestSpec, LoadResult } from "./lib/load.js";
import type { TargetResult } from "./lib/report.js";
import { percentile } from "./lib/stats.js";

// The retrieval bench (issue 42, items 6 and 7), part of `npm run bench` and alone as `npm run bench:retrieval`:
// - quality: Debian's git-doc and nginx-doc manuals, each page added as a file source through the real knowledge
//   path (extraction worker, chunking, the store's full-text index) of an in-process service, asked the hand-written
//   questions of bench/retrieval/questions.json: recall@1, recall@3 and MRR@10 per language, and the share of the
//   unanswerable questions the agent would answer "I don't know" (no passage above the answer floor);
// - cost: searchKnowledge over 100,000 passages (p50, p99, in process), and a 300-page PDF made from the manuals'
//   text indexed through the service while an open loop of frame reads runs against it (p99 against idle).
// Targets are shown, never asserted.

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(HERE, "..");

/** The Debian packages the bench reads, each with a file that shows it is installed. */
export const DOC_PACKAGES = [
  { pkg: "git-doc", probe: "/usr/share/doc/git-doc/git-add.html" },
  { pkg: "nginx-doc", probe: "/usr/share/doc/nginx/php" },
] as const;

/** The packages missing here. */
export function missingDocPackages(): string[] {
  return DOC_PACKAGES.filter((p) => !existsSync(p.probe)).map((p) => p.pkg);
}

/** The one line that names what to install. */
export const installLine = (missing: string[]) =>
  `the retrieval bench needs Debian's ${missing.join(" and ")}; install with: sudo apt-get install ${missing.join(" ")}`;

/**
 * git-doc's pages left out so that everything fits a chatbot's 200 sources: internal helpers ("--" in the name,
 * shell libraries), older names of other commands, and the two index pages (lists of links).
 */
const LEFT_OUT = new Set([
  "git-credential-cache--daemon.html",
  "git-fsmonitor--daemon.html",
  "git-mergetool--lib.html",
  "git-sh-i18n--envsubst.html",
  "git-web--browse.html",
  "git-sh-i18n.html",
  "git-sh-setup.html",
  "git-init-db.html",
  "git-fsck-objects.html",
  "git-stage.html",
  "index.html",
  "howto-index.html",
]);
const NGINX = ["php", "upstream", "fcgiwrap", "support-irc", "examples/virtual_hosts", "examples/drupal"];

/** A document of the corpus: its id as the questions name it, the file name it is uploaded as, its path. */
export interface DocFile {
  id: string;
  fileName: string;
  path: string;
}

/** The corpus: git-doc's HTML pages (but LEFT_OUT) and nginx-doc's text notes, as plain-text files. */
export function docsCorpus(): DocFile[] {
  const git = readdirSync("/usr/share/doc/git-doc")
    .filter((f) => f.endsWith(".html") && !LEFT_OUT.has(f))
    .sort()
    .map((f) => ({ id: `git-doc/${f}`, fileName: f, path: `/usr/share/doc/git-doc/${f}` }));
  const nginx = NGINX.map((n) => ({
    id: `nginx-doc/${basename(n)}`,
    fileName: `nginx-${basename(n)}.txt`,
    path: `/usr/share/doc/nginx/${n}`,
  }));
  return [...git, ...nginx];
}

export interface Question {
  question: string;
  language: string;
  /** The pages that answer it (any counts); [] when the documents cannot. */
  pages: string[];
  /** "tune": the ranking's settings were chosen on these; "held-out": never looked at while tuning. */
  split?: "tune" | "held-out";
}

export const loadQuestions = (file = join(HERE, "retrieval", "questions.json")): Question[] =>
  (JSON.parse(readFileSync(file, "utf8")) as { questions: Question[] }).questions;

/** A searcher as the agent calls it: passages best first (limit, floor), each naming its source. */
export type Search = (
  question: string,
  limit: number,
  minScore?: number,
) => Promise<{ sourceId: string; score: number }[]>;

export interface LanguageQuality {
  questions: number;
  answerable: number;
  recall_at_1: number;
  recall_at_3: number;
  mrr_at_10: number;
  /** Answerable questions the agent answered (some passage above the floor). */
  answered_share: number;
  unanswerable: number;
  /** Unanswerable questions it said "I don't know" to. */
  dont_know_share: number | null;
}

/**
 * Asks every question: the rank of the first page that answers it among the distinct pages of the top passages
 * (ranking with no floor), and whether the agent would answer at all (any passage above the answer floor).
 */
export async function measureQuality(
  search: Search,
  pageOf: (sourceId: string) => string | undefined,
  questions: Question[],
): Promise<{
  byLanguage: Record<string, LanguageQuality>;
  bySplit: Record<string, Record<string, LanguageQuality>>;
  misses: { question: string; got: string[] }[];
}> {
  const rows: { q: Question; rank: number; answered: boolean; got: string[] }[] = [];
  for (const q of questions) {
    const ranked = await search(q.question, 30, 0);
    const pages: string[] = [];
    for (const p of ranked) {
      const id = pageOf(p.sourceId);
      if (id && !pages.includes(id)) pages.push(id);
      if (pages.length === 10) break;
    }
    const rank = pages.findIndex((p) => q.pages.includes(p)) + 1;
    const answered = (await search(q.question, 3)).length > 0;
    rows.push({ q, rank, answered, got: pages.slice(0, 3) });
  }
  const summarize = (xs: typeof rows): LanguageQuality => {
    const a = xs.filter((x) => x.q.pages.length > 0);
    const u = xs.filter((x) => x.q.pages.length === 0);
    const share = (n: number, d: number) => (d === 0 ? 0 : Number((n / d).toFixed(3)));
    return {
      questions: xs.length,
      answerable: a.length,
      recall_at_1: share(a.filter((x) => x.rank === 1).length, a.length),
      recall_at_3: share(a.filter((x) => x.rank >= 1 && x.rank <= 3).length, a.length),
      mrr_at_10: share(
        a.reduce((s, x) => s + (x.rank >= 1 ? 1 / x.rank : 0), 0),
        a.length,
      ),
      answered_share: share(a.filter((x) => x.answered).length, a.length),
      unanswerable: u.length,
      dont_know_share: u.length === 0 ? null : share(u.filter((x) => !x.answered).length, u.length),
    };
  };
  const byLanguage: Record<string, LanguageQuality> = {};
  for (const l of [...new Set(questions.map((q) => q.language))])
    byLanguage[l] = summarize(rows.filter((r) => r.q.language === l));
  byLanguage.all = summarize(rows);
  // The tuning half and the held-out half (questions.json's split): English, the other languages, all.
  const bySplit: Record<string, Record<string, LanguageQuality>> = {};
  for (const split of ["tune", "held-out"]) {
    const xs = rows.filter((r) => r.q.split === split);
    if (xs.length === 0) continue;
    bySplit[split] = {
      en: summarize(xs.filter((r) => r.q.language === "en")),
      other: summarize(xs.filter((r) => r.q.language !== "en")),
      all: summarize(xs),
    };
  }
  const misses = rows
    .filter((r) => (r.q.pages.length > 0 && r.rank !== 1) || (r.q.pages.length === 0 && r.answered))
    .map((r) => ({ question: r.q.question, got: r.q.pages.length === 0 ? ["(answered)", ...r.got] : r.got }));
  return { byLanguage, bySplit, misses };
}

/** An in-process service on a fresh SQLite file (or the PostgreSQL database given), with an account and chatbot. */
export async function benchApp(dir: string, env: Record<string, string> = {}) {
  const config = loadConfig({
    AIAGENT_DB: join(dir, "aiagent.db"),
    AIAGENT_PORT: "0",
    AIAGENT_LOG_LEVEL: "warn",
    ...env,
  });
  const app = await buildApp(
    config,
    createLogger("warn", () => undefined),
  );
  const email = `retrieval-${Date.now()}@example.com`;
  const a = await app.accounts.createAccount(email, "correct horse battery staple");
  const chatbot = await app.accounts.createChatbot(email, "Docs bot", ["https://docs.example"], []);
  const key = await app.accounts.createApiKey(email);
  const caller: AccountCaller = {
    kind: "account",
    accountId: a.accountId,
    email,
    accountEmail: email,
    role: "admin",
    memberId: a.accountId,
  };
  return { app, caller, chatbotId: chatbot.chatbotId, apiKey: key.clientApiKey };
}

/** Adds each file as a file source and waits until all are indexed; answers source id -> document id. */
export async function ingestDocs(
  b: Awaited<ReturnType<typeof benchApp>>,
  files: DocFile[],
): Promise<{ pageOf: Map<string, string>; seconds: number; chunks: number; failed: string[] }> {
  const started = performance.now();
  const pageOf = new Map<string, string>();
  for (const f of files) {
    const s = await b.app.knowledge.create(b.caller, b.chatbotId, {
      kind: "file",
      title: f.id,
      fileName: f.fileName,
      content: readFileSync(f.path),
      url: "",
      maxPages: 0,
      maxDepth: 0,
      snippets: [],
    });
    pageOf.set(s.sourceId, f.id);
  }
  await b.app.knowledge.idle();
  await b.app.knowledge.warm(b.chatbotId);
  const sources = await b.app.knowledge.list(b.caller, b.chatbotId);
  return {
    pageOf,
    seconds: (performance.now() - started) / 1000,
    chunks: sources.reduce((n, s) => n + s.chunkCount, 0),
    failed: sources.filter((s) => s.status !== "indexed").map((s) => `${s.title}: ${s.status} ${s.statusReason}`),
  };
}

/** The corpus's passages as chunked, for the scale rows (read in the extraction worker once). */
async function corpusChunks(files: DocFile[]): Promise<ChunkInput[]> {
  const out: ChunkInput[] = [];
  const worker = new ExtractWorker();
  for (const f of files) {
    const r = await worker.extract({
      bytes: readFileSync(f.path),
      fileName: f.fileName,
      contentType: "",
      url: "",
    });
    for (const p of r.pages) out.push(...chunkPage({ ...p, url: `https://docs.example/${f.id}` }));
  }
  await worker.close();
  return out;
}

/** searchKnowledge over `total` passages (the corpus's, repeated with a page number): p50 and p99 in ms. */
async function scaleRow(
  dir: string,
  chunks: ChunkInput[],
  questions: Question[],
  total: number,
): Promise<{
  chunks: number;
  p50_ms: number;
  p99_ms: number;
  cpu_p50_ms: number;
  cpu_p99_ms: number;
  /** The searching thread's own CPU time (Linux; the process's above also counts V8's helper threads). */
  thread_cpu_p50_ms: number | null;
  thread_cpu_p99_ms: number | null;
  /**
   * Garbage collections while the searches were timed: how many, their pauses' total and longest, and how many began
   * inside a search (the others ran between two, as a server's would between two requests).
   */
  gc: { count: number; total_ms: number; max_ms: number; in_a_search: number; major: number };
  /** The slowest searches (wall clock), to tell a kind of question from noise. */
  slowest: { ms: number; thread_cpu_ms: number | null; question: string }[];
  searches: number;
  seed_seconds: number;
  in_memory_index: boolean;
  index_build_seconds: number;
  index_heap_mb: number;
}> {
  const store = openSqliteStore(join(dir, "scale.db"));
  try {
    const chatbotId = "00000000-0000-4000-8000-00000000c0de";
    const sourceId = "00000000-0000-4000-8000-00000000d0c5";
    const now = Date.now();
    const started = performance.now();
    await store.knowledge.addSource(
      {
        sourceId,
        accountId: "00000000-0000-4000-8000-0000000000ac",
        chatbotId,
        kind: "site",
        title: "Docs ×N",
        url: "https://docs.example/",
        fileName: "",
        mediaType: "",
        status: "indexed",
        statusReason: "",
        pageCount: 0,
        chunkCount: 0,
        contentHash: "",
        version: 1,
        maxPages: 0,
        maxDepth: 0,
        createdAt: now,
        updatedAt: now,
        indexedAt: now,
        resyncIntervalHours: 0,
      },
      new Uint8Array(),
    );
    // Pages of 50 passages: the corpus over and over, each copy its own page.
    let n = 0;
    for (let page = 0; n < total; page++) {
      const batch: ChunkInput[] = [];
      for (let i = 0; i < 50 && n < total; i++, n++) {
        const c = chunks[n % chunks.length]!;
        batch.push({ ...c, position: i });
      }
      await store.knowledge.replacePage({ sourceId, chatbotId }, `https://docs.example/copy/${page}`, "h", batch);
    }
    const seedSeconds = (performance.now() - started) / 1000;
    const service = new KnowledgeService({
      knowledge: store.knowledge,
      clock: { now: () => Date.now() } as never,
      chatbotOf: async () => {
        throw new Error("not used");
      },
      chatbotById: async () => ({ chatbotId, knowledge: [] }) as never,
      reader: {} as never,
      exclusive: async (_n, fn) => fn(),
    });
    // The chatbot's in-memory index built once (index-cache.ts; a search before it is answered by the store).
    const heap = process.memoryUsage().heapUsed;
    const built = performance.now();
    const indexed = await service.warm(chatbotId);
    const indexSeconds = (performance.now() - built) / 1000;
    // The build's garbage collected before the searches are timed (npm run bench:retrieval exposes gc): a server
    // builds an index once per change of its sources, not between two questions.
    (globalThis as { gc?: () => void }).gc?.();
    const indexMb = (process.memoryUsage().heapUsed - heap) / 1e6;
    // Warm-up, then every question three times: the time of each search as the agent runs it (limit 3, floor on),
    // on the wall clock and in this thread's CPU time (the machine's load stretches the first, not the second).
    for (const q of questions.slice(0, 10)) await service.searchKnowledge(chatbotId, q.question, 3);
    const times: number[] = [];
    const cpu: number[] = [];
    const own: number[] = [];
    const rows: { ms: number; thread_cpu_ms: number | null; question: string }[] = [];
    const gcs: { at: number; ms: number; major: boolean }[] = [];
    const windows: [number, number][] = [];
    const observer = new PerformanceObserver((l) => {
      for (const e of l.getEntries())
        gcs.push({
          at: e.startTime,
          ms: e.duration,
          major: ((e as { detail?: { kind?: number } }).detail?.kind ?? 0) !== constants.NODE_PERFORMANCE_GC_MINOR,
        });
    });
    observer.observe({ entryTypes: ["gc"] });
    for (let rep = 0; rep < 3; rep++)
      for (const q of questions) {
        const o = threadCpuMs();
        const c = process.cpuUsage();
        const t = performance.now();
        await service.searchKnowledge(chatbotId, q.question, 3);
        const ms = performance.now() - t;
        windows.push([t, t + ms]);
        const used = process.cpuUsage(c);
        const ownMs = o === null ? null : threadCpuMs()! - o;
        times.push(ms);
        cpu.push((used.user + used.system) / 1000);
        if (ownMs !== null) own.push(ownMs);
        rows.push({
          ms: Number(ms.toFixed(2)),
          thread_cpu_ms: ownMs === null ? null : Number(ownMs.toFixed(2)),
          question: q.question,
        });
      }
    // The collections' entries are delivered on a later turn of the event loop.
    await new Promise((r) => setTimeout(r, 50));
    observer.disconnect();
    times.sort((a, b) => a - b);
    cpu.sort((a, b) => a - b);
    own.sort((a, b) => a - b);
    return {
      chunks: total,
      p50_ms: Number(percentile(times, 50).toFixed(2)),
      p99_ms: Number(percentile(times, 99).toFixed(2)),
      cpu_p50_ms: Number(percentile(cpu, 50).toFixed(2)),
      cpu_p99_ms: Number(percentile(cpu, 99).toFixed(2)),
      thread_cpu_p50_ms: own.length ? Number(percentile(own, 50).toFixed(2)) : null,
      thread_cpu_p99_ms: own.length ? Number(percentile(own, 99).toFixed(2)) : null,
      gc: {
        count: gcs.length,
        total_ms: Number(gcs.reduce((a, g) => a + g.ms, 0).toFixed(1)),
        max_ms: Number(Math.max(0, ...gcs.map((g) => g.ms)).toFixed(1)),
        in_a_search: gcs.filter((g) => windows.some(([a, b]) => g.at >= a && g.at <= b)).length,
        major: gcs.filter((g) => g.major).length,
      },
      slowest: rows.sort((a, b) => b.ms - a.ms).slice(0, 5),
      searches: times.length,
      seed_seconds: Number(seedSeconds.toFixed(1)),
      in_memory_index: indexed,
      index_build_seconds: Number(indexSeconds.toFixed(1)),
      index_heap_mb: Math.round(indexMb),
    };
  } finally {
    store.close();
  }
}

/**
 * This thread's CPU time in ms (Linux's /proc/thread-self/schedstat, nanoseconds), or null elsewhere: unlike
 * process.cpuUsage it leaves out V8's compiler and collector threads running beside the search.
 */
function threadCpuMs(): number | null {
  try {
    return Number(readFileSync("/proc/thread-self/schedstat", "utf8").split(" ")[0]) / 1e6;
  } catch {
    return null;
  }
}

/** Lines of text for a PDF page: the corpus's passages, wrapped at 90 characters, in Latin-1. */
function pdfPages(chunks: ChunkInput[], count: number): string[][] {
  const lines: string[] = [];
  for (const c of chunks) {
    for (const para of c.text.split(/\n+/)) {
      const clean = para.replace(/[^\x20-\x7e]/g, " ").trim();
      for (let i = 0; i < clean.length; i += 90) lines.push(clean.slice(i, i + 90));
    }
    if (lines.length > count * 48) break;
  }
  return Array.from({ length: count }, (_, p) => lines.slice(p * 48, p * 48 + 48));
}

/** An open loop of frame reads (the S1 request) from a child process, for `seconds`. */
function frameReads(url: string, requests: HttpRequestSpec[], seconds: number, rate: number): Promise<LoadResult> {
  return new Promise((res, rej) => {
    const child = spawn(process.execPath, ["--import", "tsx", join(HERE, "lib", "open-loop-child.ts")], {
      cwd: ROOT,
      stdio: ["pipe", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.stderr.on("data", (d: Buffer) => (err += d.toString()));
    child.on("close", (code) =>
      code === 0 ? res(JSON.parse(out.trim().split("\n").pop()!) as LoadResult) : rej(new Error(err || out)),
    );
    child.stdin.end(JSON.stringify({ url, requests, rate, seconds, connections: 8 }));
  });
}

/** Indexes a 300-page PDF through the service while frame reads run; their p99 against idle. */
async function pdfRow(dir: string, chunks: ChunkInput[], pages: number, log: (s: string) => void) {
  const b = await benchApp(dir);
  const server = await b.app.listen();
  try {
    const post = async (path: string, body: unknown) => {
      const r = await fetch(server.url + path, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      if (!r.ok) throw new Error(`${path}: ${r.status} ${await r.text()}`);
      return ((await r.json()) as { data: Record<string, unknown> }).data;
    };
    const tokens = await post("/ai_agent/get_access_token", {
      user_id: "reader",
      chatbot_id: b.chatbotId,
      client_api_key: b.apiKey,
    });
    const token = encodeURIComponent(String(tokens.access_token));
    let conversationId = "";
    for (let i = 0; i < 10; i++) {
      const sent = await post(`/ai_agent/send_message?access_token=${token}`, {
        content: `message ${i}`,
        ...(conversationId ? { conversation_id: conversationId } : {}),
      });
      conversationId = String(sent.conversation_id);
    }
    const read: HttpRequestSpec[] = [
      {
        method: "GET",
        path: `/get_messages_for_conversation?conversation_id=${conversationId}&access_token=${token}`,
      },
    ];
    const rate = 200;
    // A warm-up first (the first seconds of a fresh process are JIT and cold caches, not idleness).
    await frameReads(server.url, read, 3, rate);
    const idle = await frameReads(server.url, read, 5, rate);
    log(`pdf: idle frame reads p99 ${(idle.p99Us / 1000).toFixed(2)} ms`);
    const pdf = makePdf(pdfPages(chunks, pages), { title: "Manual" });
    const add = (title: string) =>
      b.app.knowledge.create(b.caller, b.chatbotId, {
        kind: "file",
        title,
        fileName: "manual.pdf",
        content: pdf,
        url: "",
        maxPages: 0,
        maxDepth: 0,
        snippets: [],
      });
    // First alone: how long it takes; then again (another source) under the frame reads, for about as long.
    let t = performance.now();
    const first = await add("Manual");
    await b.app.knowledge.idle();
    const seconds = (performance.now() - t) / 1000;
    const indexed = await b.app.knowledge.get(b.caller, b.chatbotId, first.sourceId);
    log(
      `pdf: ${pages} pages (${(pdf.length / 1e6).toFixed(1)} MB) indexed in ${seconds.toFixed(1)} s: ${indexed.status}`,
    );
    t = performance.now();
    await add("Manual again");
    const during = await frameReads(server.url, read, Math.max(2, Math.floor(seconds)), rate);
    await b.app.knowledge.idle();
    const second = (performance.now() - t) / 1000;
    log(
      `pdf: frame reads during indexing p99 ${(during.p99Us / 1000).toFixed(2)} ms (indexing ${second.toFixed(1)} s)`,
    );
    return {
      pages,
      bytes: pdf.length,
      status: indexed.status,
      chunks: indexed.chunkCount,
      index_seconds: Number(seconds.toFixed(1)),
      frame_reads_rate: rate,
      idle_p99_ms: Number((idle.p99Us / 1000).toFixed(2)),
      during_p99_ms: Number((during.p99Us / 1000).toFixed(2)),
      during_errors: during.errors,
      ratio: Number((during.p99Us / Math.max(1, idle.p99Us)).toFixed(2)),
    };
  } finally {
    await b.app.close();
  }
}

export interface RetrievalResult {
  quality?: Record<
    string,
    {
      byLanguage: Record<string, LanguageQuality>;
      bySplit: Record<string, Record<string, LanguageQuality>>;
      ingest: unknown;
    }
  >;
  scale?: Awaited<ReturnType<typeof scaleRow>>;
  pdf?: Awaited<ReturnType<typeof pdfRow>>;
  skipped?: string;
  misses?: unknown;
}

/** Runs the retrieval rows; answers the result JSON's part and the targets (none when the packages are missing). */
export async function runRetrieval(o: {
  quick: boolean;
  log: (s: string) => void;
  postgresUrl?: string | undefined;
  /** The quality rows only (to look into the ranking). */
  qualityOnly?: boolean;
  /** The scale row only (to look into a search's cost). */
  scaleOnly?: boolean;
}): Promise<{ result: RetrievalResult; targets: TargetResult[] }> {
  const missing = missingDocPackages();
  if (missing.length > 0) {
    o.log(`retrieval: SKIPPED: ${installLine(missing)}`);
    return { result: { skipped: installLine(missing) }, targets: [] };
  }
  const work = mkdtempSync(join(tmpdir(), "aiagent-retrieval-"));
  const result: RetrievalResult = { quality: {} };
  const targets: TargetResult[] = [];
  try {
    const files = docsCorpus();
    const questions = loadQuestions();
    const backends: [string, Record<string, string>][] = [["sqlite", {}]];
    if (o.postgresUrl) backends.push(["postgres", { AIAGENT_DATABASE_URL: o.postgresUrl }]);
    for (const [name, env] of o.scaleOnly ? [] : backends) {
      const dir = mkdtempSync(join(work, `${name}-`));
      const b = await benchApp(dir, env);
      try {
        const ingest = await ingestDocs(b, files);
        o.log(
          `retrieval ${name}: ${files.length} documents, ${ingest.chunks} passages indexed in ${ingest.seconds.toFixed(1)} s${ingest.failed.length ? `; not indexed: ${ingest.failed.join("; ")}` : ""}`,
        );
        const search: Search = (q, limit, minScore) =>
          b.app.knowledge.searchKnowledge(b.chatbotId, q, limit, minScore === undefined ? {} : { minScore });
        const q = await measureQuality(search, (id) => ingest.pageOf.get(id), questions);
        result.quality![name] = {
          byLanguage: q.byLanguage,
          bySplit: q.bySplit,
          ingest: {
            documents: files.length,
            passages: ingest.chunks,
            seconds: Number(ingest.seconds.toFixed(1)),
            failed: ingest.failed,
          },
        };
        if (name === "sqlite") result.misses = q.misses;
        for (const [l, x] of Object.entries(q.byLanguage))
          o.log(
            `retrieval ${name} ${l.padEnd(3)} n=${x.questions} recall@1 ${x.recall_at_1} recall@3 ${x.recall_at_3} MRR@10 ${x.mrr_at_10} answered ${x.answered_share} don't-know ${x.dont_know_share}`,
          );
        for (const [split, ls] of Object.entries(q.bySplit))
          for (const [l, x] of Object.entries(ls))
            o.log(
              `retrieval ${name} ${split.padEnd(8)} ${l.padEnd(5)} n=${x.questions} recall@1 ${x.recall_at_1} recall@3 ${x.recall_at_3} MRR@10 ${x.mrr_at_10} don't-know ${x.dont_know_share}`,
            );
        const en = q.byLanguage.en!;
        const all = q.byLanguage.all!;
        targets.push(
          {
            name: `Retrieval recall@3, English (${name})`,
            rule: "≥ 0.85 (BM25 alone)",
            measured: `${en.recall_at_3}`,
            score: en.recall_at_3 / 0.85,
            met: en.recall_at_3 >= 0.85,
          },
          {
            name: `Retrieval MRR@10, English (${name})`,
            rule: "≥ 0.7",
            measured: `${en.mrr_at_10} (all languages ${all.mrr_at_10})`,
            score: en.mrr_at_10 / 0.7,
            met: en.mrr_at_10 >= 0.7,
          },
          {
            name: `Unanswerable → "I don't know" (${name})`,
            rule: "≥ 80 %",
            measured: `${Math.round((all.dont_know_share ?? 0) * 100)} % of ${all.unanswerable}`,
            score: (all.dont_know_share ?? 0) / 0.8,
            met: (all.dont_know_share ?? 0) >= 0.8,
          },
        );
      } finally {
        await b.app.close();
      }
    }
    if (o.qualityOnly) return { result, targets };
    if (o.scaleOnly) delete result.quality;
    const chunks = await corpusChunks(files);
    const total = o.quick ? 20_000 : 100_000;
    result.scale = await scaleRow(work, chunks, questions, total);
    o.log(
      `retrieval scale: ${total} passages (seeded in ${result.scale.seed_seconds} s, in-memory index ${result.scale.in_memory_index} built in ${result.scale.index_build_seconds} s, ~${result.scale.index_heap_mb} MB heap): searchKnowledge p50 ${result.scale.p50_ms} ms p99 ${result.scale.p99_ms} ms (CPU p50 ${result.scale.cpu_p50_ms} ms p99 ${result.scale.cpu_p99_ms} ms, this thread's p50 ${result.scale.thread_cpu_p50_ms} ms p99 ${result.scale.thread_cpu_p99_ms} ms; ${result.scale.gc.count} collections (${result.scale.gc.major} major, ${result.scale.gc.in_a_search} inside a search), ${result.scale.gc.total_ms} ms, longest ${result.scale.gc.max_ms} ms; load ${loadavg()[0]!.toFixed(1)})`,
    );
    targets.push({
      name: `Retrieval over ${total.toLocaleString("en-US")} passages`,
      rule: "p99 ≤ 5 ms in process",
      measured: `${result.scale.p99_ms} ms (p50 ${result.scale.p50_ms} ms; CPU time p99 ${result.scale.cpu_p99_ms} ms, the searching thread's ${result.scale.thread_cpu_p99_ms} ms; load ${loadavg()[0]!.toFixed(1)})`,
      score: 5 / Math.max(0.01, result.scale.p99_ms),
      met: result.scale.p99_ms <= 5,
    });
    if (o.scaleOnly) return { result, targets };
    const pages = o.quick ? 60 : 300;
    result.pdf = await pdfRow(mkdtempSync(join(work, "pdf-")), chunks, pages, o.log);
    targets.push(
      {
        name: `Indexing a ${pages}-page PDF`,
        rule: "≤ 60 s",
        measured: `${result.pdf.index_seconds} s (${result.pdf.chunks} passages, ${result.pdf.status})`,
        score: 60 / Math.max(0.1, result.pdf.index_seconds),
        met: result.pdf.index_seconds <= 60 && result.pdf.status === "indexed",
      },
      {
        name: "Frame reads while a PDF is indexed",
        rule: "p99 ≤ 1.5 × idle",
        measured: `${result.pdf.during_p99_ms} ms vs ${result.pdf.idle_p99_ms} ms idle (${result.pdf.ratio}×)`,
        score: 1.5 / Math.max(0.01, result.pdf.ratio),
        met: result.pdf.ratio <= 1.5 && result.pdf.during_errors === 0,
      },
    );
    return { result, targets };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

// `npm run bench:retrieval [-- --quick] [-- --postgres URL] [-- --quality | --scale]`: these rows alone (--quality: the
// quality rows only; --scale: the search-cost row only), written to bench/results/.
if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const args = process.argv.slice(2);
  const quick = args.includes("--quick");
  const pgAt = args.indexOf("--postgres");
  const started = Date.now();
  const loadBefore = loadavg()[0]!;
  const log = (s: string) => process.stderr.write(`[retrieval ${((Date.now() - started) / 1000).toFixed(0)}s] ${s}\n`);
  const { result, targets } = await runRetrieval({
    quick,
    log,
    postgresUrl: pgAt >= 0 ? args[pgAt + 1] : undefined,
    qualityOnly: args.includes("--quality"),
    scaleOnly: args.includes("--scale"),
  });
  const date = new Date().toISOString();
  const out = join(ROOT, "bench", "results");
  mkdirSync(out, { recursive: true });
  const file = join(out, `retrieval-${date.replace(/[:]/g, "-").replace(/\..+$/, "")}${quick ? "-quick" : ""}.json`);
  const json = {
    date,
    mode: quick ? "quick" : "full",
    machine: {
      cpu: cpus()[0]?.model ?? "unknown",
      cores: cpus().length,
      node: process.version,
      load_average_before: loadBefore,
    },
    retrieval: result,
    targets,
    wall_seconds: (Date.now() - started) / 1000,
  };
  writeFileSync(file, `${JSON.stringify(json, null, 2)}\n`);
  const { targetTable } = await import("./lib/report.js");
  process.stdout.write(`\n${targetTable(targets)}\n\nWrote ${file}\n`);
  process.exit(0);
}
