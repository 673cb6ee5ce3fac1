import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { scaled } from "./time-scale.js";

/** One request the receiver got. */
export interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  status: number;
}

/** A real HTTP receiver on loopback that records every POST and answers with `respond`'s status. */
export class WebhookReceiver {
  readonly received: Received[] = [];
  /** The status to answer the nth request (0-based) with; 204 by default. */
  respond: (n: number) => number = () => 204;
  /** While true, requests are read and counted in `stalled` but never answered. */
  stall = false;
  stalled = 0;
  /** The `webhook-id` of every request read, answered or stalled: each attempt that reached this endpoint. */
  readonly seen: string[] = [];
  private server: Server | undefined;
  port = 0;

  get url(): string {
    return `http://127.0.0.1:${this.port}/hooks`;
  }

  /** Listens (again on the same port after `down()`). */
  async up(): Promise<void> {
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        this.seen.push(String(req.headers["webhook-id"] ?? ""));
        if (this.stall) {
          this.stalled++;
          return;
        }
        const status = this.respond(this.received.length);
        this.received.push({
          path: req.url ?? "",
          headers: req.headers,
          body: Buffer.concat(chunks).toString("utf8"),
          status,
        });
        // A redirect points back here, so a client that followed it would show up as a request to /redirected.
        res.writeHead(status, status >= 300 && status < 400 ? { location: "/redirected" } : {}).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(this.port, "127.0.0.1", resolve));
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
  }

  /** Stops listening: connections are refused until `up()`. */
  async down(): Promise<void> {
    const s = this.server;
    this.server = undefined;
    if (!s) return;
    s.closeAllConnections();
    await new Promise<void>((resolve) => s.close(() => resolve()));
  }

  /** The bodies of the requests answered 2xx, parsed. */
  accepted(): { headers: IncomingHttpHeaders; event: any; body: string }[] {
    return this.received
      .filter((r) => r.status >= 200 && r.status < 300)
      .map((r) => ({ headers: r.headers, body: r.body, event: JSON.parse(r.body) }));
  }
}

/**
 * Polls `done` (bounded: `tries` times, `stepMs` apart, calling `step` between; the tries scaled by
 * AIAGENT_TEST_TIME_SCALE); throws with `what` if it never holds.
 */
export async function eventually(
  what: string,
  done: () => boolean | Promise<boolean>,
  o: { tries?: number; stepMs?: number; step?: () => void } = {},
): Promise<void> {
  const tries = scaled(o.tries ?? 400);
  for (let i = 0; i < tries; i++) {
    if (await done()) return;
    o.step?.();
    await new Promise((r) => setTimeout(r, o.stepMs ?? 25));
  }
  throw new Error(`never happened: ${what}`);
}
