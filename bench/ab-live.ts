// Two builds of the service side by side under fan-out, driven alternately: CPU per event written, each send a frame
// `send_message` with the built-in agent (two events) to conversations that `--streams` open streams watch (eight per
// conversation, as bench:live's W2), what a W2 change measures on a busy machine, where one run moves more than most
// changes do.
//
//   node --import tsx bench/ab-live.ts --base /path/to/other/checkout [--streams 1600] [--sends 600] [--rounds 6]
//
// Both servers run at once on their own copy of the 1k dataset (run `npm run bench:live -- --only W4 --scale 1k` or any
// bench:live run once first), each with its streams open; then, after a round each not counted, each round sends `--sends` messages (at most
// `--concurrency` in flight) to A, then to B, then B, then A… (the order swapped every round), waits for every
// delivery, and prints each server's CPU (user + system, /proc) per event written, with the ratio B ÷ A of the
// medians, and the missed and duplicated deliveries. AIAGENT_AB_NODE_ARGS_A / _B: node flags for one side only (the
// same build on both sides, `--base .`, measures a flag; bench/ab.ts takes them too).
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { Agent, request } from "node:http";
import { loadavg, tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { abOptions, abSide } from "./lib/ab-options.js";
import { cachedDataset } from "./lib/dataset.js";
import { cpuMicros } from "./lib/proc.js";
import type { ServerProcess } from "./lib/procs.js";
import { openAll, type RawStream } from "./lib/raw-stream.js";
import { median } from "./lib/stats.js";

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(HERE, "..");
const opt = abOptions(ROOT, {
  streams: { type: "string", default: "1600" },
  sends: { type: "string", default: "600" },
  concurrency: { type: "string", default: "32" },
});
const PER_CONV = 8;
const convCount = Math.max(1, Math.floor(Number(opt.streams) / PER_CONV));
const sends = Number(opt.sends);
const concurrency = Number(opt.concurrency);
const seeded = cachedDataset(opt.cache, "1k", "npm run bench:live -- --only W4 --scale 1k");
const seed = JSON.parse(readFileSync(seeded.replace(/\.db$/, ".json"), "utf8")) as {
  chatbot_id: string;
  client_api_key: string;
};
const work = mkdtempSync(join(tmpdir(), "aiagent-ab-live-"));
const servers: ServerProcess[] = [];
const builds: string[] = [];
process.env.AIAGENT_SECRETS ??= "bench-only-key-encryption-secret-0123456789";
const agent = new Agent({ keepAlive: true, maxSockets: 64 });

function post(base: string, path: string, body: unknown): Promise<any> {
  const u = new URL(base);
  const data = JSON.stringify(body);
  return new Promise((done, fail) => {
    const req = request(
      { host: u.hostname, port: u.port, method: "POST", path, agent, headers: { "content-type": "application/json" } },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (d: string) => {
          text += d;
        });
        res.on("end", () =>
          res.statusCode === 200 ? done(JSON.parse(text)) : fail(new Error(`${path}: ${res.statusCode} ${text}`)),
        );
      },
    );
    req.on("error", fail);
    req.end(data);
  });
}

async function side(name: string, root: string) {
  const n = convCount * PER_CONV;
  const { build, server: s } = await abSide(name, root, seeded, work, {
    AIAGENT_WATCH_STREAMS: String(n + 1000),
    AIAGENT_WATCH_FRAME_STREAMS: String(n + 500),
    AIAGENT_WATCH_FRAME_STREAMS_PER_ACCOUNT: String(n + 500),
    AIAGENT_WATCH_STREAMS_PER_ADDRESS: String(n + 1000),
  });
  builds.push(build);
  servers.push(s);
  // Each conversation: one customer, two tokens, eight streams (four on each token).
  const convs: { id: string; token: string; streams: RawStream[] }[] = [];
  const paths: string[] = [];
  for (let c = 0; c < convCount; c++) {
    const tok = async () =>
      (
        await post(s.url, "/ai_agent/get_access_token", {
          user_id: `ab-${c}`,
          chatbot_id: seed.chatbot_id,
          client_api_key: seed.client_api_key,
        })
      ).data.access_token as string;
    const [a, b] = [await tok(), await tok()];
    const first = await post(s.url, `/ai_agent/send_message?access_token=${a}`, { content: "Hello" });
    convs.push({ id: first.data.conversation_id, token: a, streams: [] });
    for (let k = 0; k < PER_CONV; k++)
      paths.push(
        `/watch_conversation?conversation_id=${first.data.conversation_id}&after_message_order=2&access_token=${k < 4 ? a : b}`,
      );
  }
  const seen = new Map<RawStream, Set<string>>();
  let duplicated = 0;
  const opened = await openAll(Number(new URL(s.url).port), paths, 64, (st, line) => {
    const m = /"message_id":"([^"]+)"/.exec(line);
    if (!m) return;
    let got = seen.get(st);
    if (!got) seen.set(st, (got = new Set()));
    if (got.has(m[1]!)) duplicated++;
    else got.add(m[1]!);
  });
  if (opened.failed) throw new Error(`${name}: ${opened.failed} streams failed: ${opened.firstFailure}`);
  opened.streams.forEach((st, i) => {
    convs[Math.floor(i / PER_CONV)]!.streams.push(st);
  });
  let next = 0;
  /** One round: `sends` sends, every delivery awaited; the server's CPU per event written, ms. */
  const round = async () => {
    const written: { conv: (typeof convs)[number]; ids: string[] }[] = [];
    const cpu0 = cpuMicros(s.pid);
    let left = sends;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (left-- > 0) {
          const conv = convs[next++ % convs.length]!;
          const r = await post(s.url, `/ai_agent/send_message?access_token=${conv.token}`, {
            conversation_id: conv.id,
            content: "Do you ship to Canada, and how long does it take?",
          });
          written.push({ conv, ids: [r.data.user_message.message_id, r.data.reply.message_id] });
        }
      }),
    );
    const all = () => written.every((w) => w.conv.streams.every((st) => w.ids.every((id) => seen.get(st)?.has(id))));
    const end = Date.now() + 30_000;
    while (!all() && Date.now() < end) await new Promise((r) => setTimeout(r, 10));
    const ms = (cpuMicros(s.pid) - cpu0) / 1000 / (written.length * 2);
    let missed = 0;
    for (const w of written)
      for (const st of w.conv.streams) for (const id of w.ids) if (!seen.get(st)?.has(id)) missed++;
    return { ms, missed };
  };
  return { name, round, dup: () => duplicated };
}

async function main() {
  const a = await side("A", opt.base);
  const b = await side("B", ROOT);
  console.log(`A: ${opt.base}  B: ${ROOT}; ${convCount * PER_CONV} streams each, ${sends} sends a round`);
  // A round each first, not counted: the code paths compiled, the first reads of the file done.
  await a.round();
  await b.round();
  const figures: Record<string, number[]> = { A: [], B: [] };
  let missed = 0;
  for (let r = 0; r < opt.rounds; r++) {
    const order = r % 2 === 0 ? [a, b] : [b, a];
    const line: string[] = [];
    for (const x of order) {
      const got = await x.round();
      figures[x.name]!.push(got.ms);
      missed += got.missed;
      line.push(`${x.name} ${got.ms.toFixed(3)} ms/event`);
    }
    console.log(`round ${r + 1} (load ${loadavg()[0]!.toFixed(1)}): ${line.join(", ")}`);
  }
  const ma = median(figures.A!);
  const mb = median(figures.B!);
  console.log(
    `median A ${ma.toFixed(3)}, B ${mb.toFixed(3)} ms of CPU per event written; B ÷ A ${(mb / ma).toFixed(3)}; missed ${missed}, duplicated ${a.dup() + b.dup()}`,
  );
}

main()
  .catch((e) => {
    console.error(e);
    process.exitCode = 1;
  })
  .finally(async () => {
    for (const s of servers) await s.stop().catch(() => 0);
    rmSync(work, { recursive: true, force: true });
    for (const d of builds) rmSync(d, { recursive: true, force: true });
    process.exit();
  });
