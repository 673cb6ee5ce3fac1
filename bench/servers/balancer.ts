import { connect, createServer, type Socket } from "node:net";

// The scale-out scenario's load balancer: plain TCP, each new connection to the next backend in turn (what nginx's
// round robin does for keep-alive HTTP/1.1). Usage: node balancer.js <url> [<url> ...]; prints "ready <url>".
// The one- and two-instance rows both go through it, so its cost is in both.
const backends = process.argv.slice(2).map((u) => new URL(u));
if (backends.length === 0) throw new Error("usage: balancer.js <backend url>...");
let next = 0;
const open = new Set<Socket>();
const server = createServer((client) => {
  const b = backends[next++ % backends.length]!;
  const upstream = connect(Number(b.port), b.hostname);
  client.setNoDelay(true);
  upstream.setNoDelay(true);
  open.add(client);
  client.pipe(upstream).pipe(client);
  const close = () => {
    open.delete(client);
    client.destroy();
    upstream.destroy();
  };
  client.on("error", close).on("close", close);
  upstream.on("error", close).on("close", close);
});
server.listen(0, "127.0.0.1", () => {
  const a = server.address() as { port: number };
  process.stdout.write(`ready http://127.0.0.1:${a.port}\n`);
});
process.on("SIGTERM", () => {
  server.close(() => process.exit(0));
  for (const s of open) s.destroy();
});
