import autocannon from "autocannon";
import { type HttpRequestSpec, runPrefix } from "./load.js";
import { readStdin } from "./stats.js";

// The fallback HTTP/1.1 load generator when wrk is not installed: autocannon in its own process, settings as
// JSON on stdin, one JSON LoadResult line out.
const s = JSON.parse(await readStdin()) as {
  url: string;
  requests: HttpRequestSpec[];
  connections: number;
  seconds: number;
};
const prefix = runPrefix();
let k = 0;
const result = await autocannon({
  url: s.url,
  connections: s.connections,
  duration: s.seconds,
  requests: s.requests.map((r) => ({
    method: r.method,
    path: r.path,
    headers: { ...(r.body !== undefined ? { "content-type": "application/json" } : {}), ...r.headers },
    ...(r.body !== undefined ? { body: r.body } : {}),
    ...(r.freshHeader !== undefined
      ? {
          setupRequest: (req: { headers?: Record<string, string> }) => ({
            ...req,
            headers: { ...req.headers, [r.freshHeader!]: `${prefix}-${++k}` },
          }),
        }
      : {}),
  })),
});
const seconds = result.duration;
const requests = result.requests.total;
process.stdout.write(
  `${JSON.stringify({
    requests,
    seconds,
    rps: requests / seconds,
    p50Us: result.latency.p50 * 1000,
    p99Us: result.latency.p99 * 1000,
    errors: result.errors + result.timeouts + result.non2xx,
  })}\n`,
);
