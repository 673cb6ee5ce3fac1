// `node --expose-gc --import tsx bench/stream-promises.ts [--convs 250] [--sends 1000]`: the promises one delivery of a
// live event costs (a frame send_message with the built-in agent, two events, to conversations that eight raw streams
// each watch), counted with an async hook on a real server in this process: a count the machine's load cannot blur.
// FH_STACKS=1 prints, per delivery, where they are made (the first two frames of src/). Also prints this process's CPU
// per event written (the server's and the streams' readers') and the collector's time, for a side-by-side look.
import { createHook } from "node:async_hooks";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PerformanceObserver } from "node:perf_hooks";
import { parseArgs } from "node:util";
import { getHeapSpaceStatistics } from "node:v8";
import { postJson } from "./lib/post-json.js";
import { openAll, type RawStream } from "./lib/raw-stream.js";

const { values: opt } = parseArgs({
  options: { convs: { type: "string", default: "250" }, sends: { type: "string", default: "1000" } },
});
const CONVS = Number(opt.convs);
const SENDS = Number(opt.sends);
const PER = 8;
const gc = (globalThis as { gc?: () => void }).gc!;
const { buildApp } = await import("../src/app.js");
const { loadConfig } = await import("../src/config.js");
const { createLogger } = await import("../src/log.js");
const { frameRoutes } = await import("../src/frame/routes.js");
const dir = mkdtempSync(join(tmpdir(), "aiagent-fh-"));
const n = CONVS * PER;
const config = loadConfig({
  AIAGENT_DB: join(dir, "aiagent.db"),
  AIAGENT_PORT: "0",
  AIAGENT_LOG_LEVEL: "error",
  AIAGENT_SECRETS: "bench-only-key-encryption-secret-0123456789",
  AIAGENT_RATE_LIMIT_MESSAGES_PER_MINUTE: "0",
  AIAGENT_WATCH_STREAMS: String(n + 1000),
  AIAGENT_WATCH_FRAME_STREAMS: String(n + 500),
  AIAGENT_WATCH_FRAME_STREAMS_PER_ACCOUNT: String(n + 500),
  AIAGENT_WATCH_STREAMS_PER_ADDRESS: String(n + 1000),
});
const app = await buildApp(
  config,
  createLogger("error", () => undefined),
  { extraRoutes: frameRoutes },
);
const server = await app.listen();
const post = (path: string, body: unknown) => postJson(server.url, path, body);
const email = "fh@example.com";
await app.accounts.createAccount(email, "correct horse battery staple");
const chatbot = await app.accounts.createChatbot(
  email,
  "Shop",
  ["https://shop.example"],
  [{ title: "Shipping", url: "https://shop.example/ship", snippet: "We ship to Canada in 5 days." }],
);
const key = await app.accounts.createApiKey(email);
const convs: { id: string; token: string }[] = [];
const paths: string[] = [];
for (let c = 0; c < CONVS; c++) {
  const tok = async () =>
    (
      await post("/ai_agent/get_access_token", {
        user_id: `fh-${c}`,
        chatbot_id: chatbot.chatbotId,
        client_api_key: key.clientApiKey,
      })
    ).data.access_token as string;
  const [a, b] = [await tok(), await tok()];
  const first = await post(`/ai_agent/send_message?access_token=${a}`, { content: "Hello" });
  convs.push({ id: first.data.conversation_id, token: a });
  for (let k = 0; k < PER; k++)
    paths.push(
      `/watch_conversation?conversation_id=${first.data.conversation_id}&after_message_order=2&access_token=${k < 4 ? a : b}`,
    );
}
let delivered = 0;
const opened = await openAll(Number(new URL(server.url).port), paths, 64, (_s: RawStream, line: string) => {
  if (line.includes('"message_id"')) delivered++;
});
if (opened.failed) throw new Error(opened.firstFailure);
await new Promise((r) => setTimeout(r, 500));
const heap = () => {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
};
const old = () => getHeapSpaceStatistics().find((s) => s.space_name === "old_space")!.space_used_size;
let gcMs = 0;
let gcs = 0;
const obs = new PerformanceObserver((l) => {
  for (const e of l.getEntries()) {
    gcMs += e.duration;
    gcs++;
  }
});
let promises = 0;
const stacks = new Map<string, number>();
const STACKS = process.env.FH_STACKS === "1";
Error.stackTraceLimit = 12;
const hook = createHook({
  init(_id, type) {
    if (type !== "PROMISE") return;
    promises++;
    if (STACKS) {
      const st = (new Error().stack ?? "")
        .split("\n")
        .slice(2)
        .filter((l) => l.includes("/src/"))
        .slice(0, 2)
        .map((l) =>
          l
            .trim()
            .replace(/\(.*\/src\//, "(")
            .replace(/^at /, ""),
        )
        .join(" < ");
      stacks.set(st, (stacks.get(st) ?? 0) + 1);
    }
  },
});
const round = async (count: boolean) => {
  const before = delivered;
  let left = SENDS;
  let next = 0;
  if (count) hook.enable();
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (left-- > 0) {
        const c = convs[next++ % convs.length]!;
        await post(`/ai_agent/send_message?access_token=${c.token}`, {
          conversation_id: c.id,
          content: "Do you ship to Canada, and how long does it take?",
        });
      }
    }),
  );
  const end = Date.now() + 30_000;
  while (delivered - before < SENDS * 2 * PER && Date.now() < end) await new Promise((r) => setTimeout(r, 10));
  hook.disable();
  return delivered - before;
};
await round(false);
const promisesRound = async () => {
  promises = 0;
  const d = await round(true);
  return promises / d;
};
const ppd = await promisesRound();
if (STACKS)
  for (const [k, v] of [...stacks].sort((a, b) => b[1] - a[1]).slice(0, 40))
    console.log((v / (SENDS * 2 * PER)).toFixed(2).padStart(6), k);
gc();
obs.observe({ entryTypes: ["gc"] });
const cpu0 = process.cpuUsage();
const old0 = old();
const d = await round(false);
const cpu = process.cpuUsage(cpu0);
const promoted = old() - old0;
await new Promise((r) => setTimeout(r, 100));
obs.disconnect();
const after = heap();
console.log(
  JSON.stringify({
    streams: n,
    sends: SENDS,
    delivered: d,
    expected: SENDS * 2 * PER,
    promisesPerDelivery: +ppd.toFixed(1),
    cpuUsPerEvent: Math.round((cpu.user + cpu.system) / (SENDS * 2)),
    oldSpaceGrowthBytesPerEvent: Math.round(promoted / (SENDS * 2)),
    gcMsPerThousandEvents: +((gcMs / (SENDS * 2)) * 1000).toFixed(1),
    gcs,
    heapAfterMB: +(after / 1e6).toFixed(1),
  }),
);
for (const s of opened.streams) s.close();
await server.close(100);
await app.close();
rmSync(dir, { recursive: true, force: true });
process.exit(0);
