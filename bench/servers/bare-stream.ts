import { createServer, type ServerResponse } from "node:http";

// The live rows' baseline: plain node:http holding NDJSON streams as the service's watch routes do, with nothing
// else (no auth, no storage, no credential checks). Usage: node bare-stream.js <heartbeat ms>; prints "ready <url>".
//   GET  /watch?c=ID            a stream of conversation ID: one state line, then what is published, and heartbeats
//   GET  /backlog?n=N           N message lines, written as fast as the client takes them, then the end
//   POST /publish?c=ID&ids=A,B  one message line per id to every stream of ID (answered once written)
//   POST /end?c=ID              ends the streams of ID with an error line, as a revocation does
const heartbeatMs = Number(process.argv[2] ?? 25_000);
const streams = new Map<string, Set<ServerResponse>>();
const all = new Set<ServerResponse>();

const messageLine = (c: string, id: string, order: number) =>
  `${JSON.stringify({
    result: {
      message: {
        message_id: id,
        conversation_id: c,
        conversation_created_at: "2026-11-27T00:00:00.000Z",
        content: "Do you ship to Canada, and how long does it take?",
        created_at: new Date().toISOString(),
        message_order: order,
        tool_calls: [],
        documents: [],
        role: "user",
      },
      cursor: String(order),
    },
  })}\n`;

const server = createServer((req, res) => {
  const url = new URL(req.url ?? "/", "http://x");
  const c = url.searchParams.get("c") ?? "";
  if (url.pathname === "/watch") {
    res.writeHead(200, { "content-type": "application/x-ndjson" });
    res.write(`${JSON.stringify({ result: { conversation: { conversation_id: c, status: "open" }, cursor: "2" } })}\n`);
    let set = streams.get(c);
    if (!set) streams.set(c, (set = new Set()));
    set.add(res);
    all.add(res);
    res.on("close", () => {
      set.delete(res);
      all.delete(res);
    });
    return;
  }
  if (url.pathname === "/backlog") {
    const n = Number(url.searchParams.get("n") ?? 0);
    res.writeHead(200, { "content-type": "application/x-ndjson" });
    let i = 0;
    const pump = () => {
      while (i < n) {
        i++;
        if (!res.write(messageLine("backlog", `m-${i}`, i))) return void res.once("drain", pump);
      }
      res.end();
    };
    pump();
    return;
  }
  if (req.method === "POST" && url.pathname === "/publish") {
    const ids = (url.searchParams.get("ids") ?? "").split(",");
    for (const s of streams.get(c) ?? []) for (const id of ids) s.write(messageLine(c, id, 0));
    res.end("{}");
    return;
  }
  if (req.method === "POST" && url.pathname === "/end") {
    for (const s of streams.get(c) ?? []) s.end(`{"error":{"code":"unauthenticated","message":"revoked"}}\n`);
    res.end("{}");
    return;
  }
  res.writeHead(404).end();
});
server.keepAliveTimeout = 60_000;
server.requestTimeout = 0;
if (heartbeatMs > 0)
  setInterval(() => {
    for (const s of all) s.write('{"result":{"cursor":"2"}}\n');
  }, heartbeatMs).unref();
server.listen(0, "127.0.0.1", () => {
  const a = server.address() as { port: number };
  process.stdout.write(`ready http://127.0.0.1:${a.port}\n`);
});
process.on("SIGTERM", () => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
});
