import { readFileSync } from "node:fs";
import { createServer } from "node:http";

// The baseline: plain node:http answering a fixed JSON body (the size of the service's frame read), no routing,
// no auth, no storage. Usage: node bare.js <body.json>; prints "ready <url>" once listening on 127.0.0.1.
const body = readFileSync(process.argv[2]!);
const server = createServer((req, res) => {
  if (req.method === "GET") {
    res.writeHead(200, { "content-type": "application/json", "content-length": body.length });
    res.end(body);
    return;
  }
  // POST: read the body, answer the same fixed JSON (a POST baseline with the same response size).
  req.on("data", () => undefined);
  req.on("end", () => {
    res.writeHead(200, { "content-type": "application/json", "content-length": body.length });
    res.end(body);
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, "127.0.0.1", () => {
  const a = server.address() as { port: number };
  process.stdout.write(`ready http://127.0.0.1:${a.port}\n`);
});
process.on("SIGTERM", () => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
});
