import { Agent, request } from "node:http";
import type { HttpRequestSpec } from "./load.js";
import { percentile, readStdin } from "./stats.js";

// The open-loop load generator (wrk2's idea): request i is due at start + i / rate whether or not earlier ones
// have answered, and its latency counts from when it was due, so a slow server's queue shows in p99 instead of
// slowing the sender down (no coordinated omission). Settings as JSON on stdin, one JSON line out.
const s = JSON.parse(await readStdin()) as {
  url: string;
  requests: HttpRequestSpec[];
  /** Offered requests per second. */
  rate: number;
  seconds: number;
  /** At most this many sockets; requests due while all are busy wait in the agent's queue (and that counts). */
  connections: number;
};
const target = new URL(s.url);
const agent = new Agent({ keepAlive: true, maxSockets: s.connections });
const total = Math.max(1, Math.round(s.rate * s.seconds));
const prepared = s.requests.map((r) => ({
  method: r.method,
  path: r.path,
  headers: {
    ...(r.body !== undefined
      ? { "content-type": "application/json", "content-length": Buffer.byteLength(r.body) }
      : {}),
    ...r.headers,
  },
  body: r.body,
}));
const latencies: number[] = [];
/** Requests sent and not yet answered, with when each was due. */
const pending = new Map<number, { req: ReturnType<typeof request>; due: number }>();
let answered = 0;
let errors = 0;
/** Given up on: no answer within 5 s of being sent, or by the drain deadline (overload, not a wrong answer). */
let unanswered = 0;
let done = 0;
let sent = 0;
const start = performance.now();

function send(i: number): void {
  const due = start + (i * 1000) / s.rate;
  const r = prepared[i % prepared.length]!;
  const req = request(
    { host: target.hostname, port: target.port, method: r.method, path: r.path, headers: r.headers, agent },
    (res) => {
      res.on("data", () => undefined);
      res.on("error", () => undefined);
      res.on("end", () => {
        if (!pending.has(i)) return;
        if (res.statusCode !== 200) errors++;
        else latencies.push((performance.now() - due) * 1000);
        answered++;
        finish(i);
      });
    },
  );
  // A request still unanswered 5 s after it went out (wrk's --timeout) is given up on.
  req.setTimeout(5000, () => giveUp(i));
  req.on("error", () => {
    if (!pending.has(i)) return;
    errors++;
    finish(i);
  });
  pending.set(i, { req, due });
  req.end(r.body);
}

/** Stops waiting for request i: counted as unanswered, its wait so far counted as its latency (a lower bound). */
function giveUp(i: number): void {
  const p = pending.get(i);
  if (!p) return;
  latencies.push((performance.now() - p.due) * 1000);
  unanswered++;
  finish(i);
  p.req.destroy();
}

let resolveAll: () => void;
const all = new Promise<void>((r) => (resolveAll = r));
function finish(i: number): void {
  pending.delete(i);
  if (++done === total) resolveAll();
}

// Every millisecond, send what has fallen due (timers are not finer; a burst of one millisecond's worth is fine).
const timer = setInterval(() => {
  const due = Math.min(total, Math.floor(((performance.now() - start) * s.rate) / 1000) + 1);
  while (sent < due) send(sent++);
  if (sent === total) clearInterval(timer);
}, 1);
// Bounded in time too: what a server has not answered 10 s after the last request fell due is given up on, so an
// overloaded server ends the run without hiding (its waits count in p99).
const drain = setTimeout(
  () => {
    for (const i of [...pending.keys()]) giveUp(i);
  },
  (s.seconds + 10) * 1000,
);
await all;
clearTimeout(drain);
const seconds = (performance.now() - start) / 1000;
agent.destroy();
const sorted = latencies.sort((a, b) => a - b);
process.stdout.write(
  `${JSON.stringify({
    requests: answered,
    seconds,
    rps: answered / seconds,
    p50Us: percentile(sorted, 50),
    p99Us: percentile(sorted, 99),
    errors,
    unanswered,
  })}\n`,
);
