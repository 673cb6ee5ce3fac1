// The write of one shared NDJSON line to many open HTTP/1.1 chunked answers, as a watch stream's event is written under
// fan-out: by `res.write` (the answer makes the chunk: its length in hex, four writes corked, one `writev` on the next
// tick) or by the transcoder's `writeChunk` (one chunk made once, one `write` per socket). A count, not a timing:
//
//   valgrind --tool=callgrind --callgrind-out-file=/dev/null node --import tsx bench/repro/stream-write.ts \
//     --mode res|chunk --streams 200 --events 0|200
//
// run once with --events 0 and once with 200 for each mode: the difference of the two "Collected" counts, divided by
// streams × events, is the instructions per stream per event (the loader and the opening cancel out). The readers run
// in a child process outside valgrind, so only the writing side is counted.
import { fork } from "node:child_process";
import { Agent, createServer, request, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { type SharedLine, writeChunk } from "../../src/protocol/rest/transcoder.js";

const { values: opt } = parseArgs({
  options: {
    mode: { type: "string", default: "chunk" },
    streams: { type: "string", default: "200" },
    events: { type: "string", default: "200" },
    reader: { type: "string" },
  },
});
const streams = Number(opt.streams);

if (opt.reader) {
  // The child: `streams` readers of the parent's port, each taking every byte, until the parent ends them.
  const agent = new Agent({ keepAlive: true, maxSockets: streams });
  let open = streams;
  for (let i = 0; i < streams; i++)
    request({ port: Number(opt.reader), path: "/", agent }, (res) => {
      res.resume();
      res.on("end", () => {
        if (--open === 0) process.exit(0);
      });
    }).end();
} else {
  const events = Number(opt.events);
  const bytes = Buffer.from(
    `{"result":{"event":{"message":{"message_id":"00000000-0000-4000-8000-000000000000","role":"assistant",` +
      `"content":"We ship to Canada; delivery takes 5 to 8 working days.","created_at":"2026-11-29T02:00:00.000Z",` +
      `"message_order":"12"}},"cursor":"12"}}\n`,
  );
  const line: SharedLine = { cursor: "12", bytes, chunk: undefined };
  const answers: ServerResponse[] = [];
  const write = (res: ServerResponse) => {
    if (opt.mode !== "chunk" || !writeChunk(res, line)) res.write(bytes);
  };
  let done = 0;
  const step = () => {
    if (done++ === events) {
      for (const r of answers) r.end();
      return;
    }
    for (const r of answers) write(r);
    setImmediate(step);
  };
  const server = createServer((_req, res) => {
    res.writeHead(200, { "content-type": "application/x-ndjson" });
    res.write(bytes);
    answers.push(res);
    if (answers.length === streams) setTimeout(step, 200);
  });
  server.listen(0, "127.0.0.1", () => {
    const port = (server.address() as AddressInfo).port;
    const child = fork(fileURLToPath(import.meta.url), ["--streams", String(streams), "--reader", String(port)], {
      execArgv: ["--import", "tsx"],
    });
    child.on("exit", () => server.close(() => process.exit(0)));
  });
}
