import { type ClientHttp2Session, connect, constants } from "node:http2";
import { percentile, readStdin } from "./stats.js";

// A small closed-loop gRPC load generator (wrk does not speak HTTP/2): `connections` calls in flight at all
// times, spread over up to 4 HTTP/2 sessions, for `seconds`. Reads its settings as JSON on stdin and prints
// one JSON LoadResult line. Every call must end with grpc-status 0 to count as a success.
interface Settings {
  url: string;
  path: string;
  message: string;
  headers: Record<string, string>;
  connections: number;
  seconds: number;
}

const s = JSON.parse(await readStdin()) as Settings;
const message = Buffer.from(s.message, "base64");
const frame = Buffer.alloc(5 + message.length);
frame.writeUInt8(0, 0);
frame.writeUInt32BE(message.length, 1);
message.copy(frame, 5);

const sessionCount = Math.max(1, Math.min(4, s.connections));
const sessions: ClientHttp2Session[] = [];
for (let i = 0; i < sessionCount; i++) sessions.push(connect(s.url));
const headers = {
  [constants.HTTP2_HEADER_METHOD]: "POST",
  [constants.HTTP2_HEADER_PATH]: s.path,
  "content-type": "application/grpc+proto",
  te: "trailers",
  ...s.headers,
};

const latencies: number[] = [];
let errors = 0;
const LATENCY_CAP = 2_000_000;

function call(session: ClientHttp2Session): Promise<void> {
  return new Promise((resolve) => {
    const start = process.hrtime.bigint();
    const req = session.request(headers);
    let status: string | undefined;
    req.on("response", (h) => {
      if (h["grpc-status"] !== undefined) status = String(h["grpc-status"]);
    });
    req.on("trailers", (t) => {
      status = String(t["grpc-status"]);
    });
    req.on("data", () => undefined);
    const finish = () => {
      if (status === "0") {
        if (latencies.length < LATENCY_CAP) latencies.push(Number(process.hrtime.bigint() - start) / 1000);
      } else errors++;
      resolve();
    };
    req.on("end", finish);
    req.on("error", () => {
      errors++;
      resolve();
    });
    req.end(frame);
  });
}

const end = Date.now() + s.seconds * 1000;
const started = process.hrtime.bigint();
await Promise.all(
  Array.from({ length: s.connections }, async (_, i) => {
    const session = sessions[i % sessionCount]!;
    while (Date.now() < end) await call(session);
  }),
);
const seconds = Number(process.hrtime.bigint() - started) / 1e9;
for (const x of sessions) x.close();
latencies.sort((a, b) => a - b);
const requests = latencies.length;
process.stdout.write(
  `${JSON.stringify({
    requests,
    seconds,
    rps: requests / seconds,
    p50Us: percentile(latencies, 50),
    p99Us: percentile(latencies, 99),
    errors,
  })}\n`,
);
