import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Webhook } from "standardwebhooks";

/** One call the tool server received, with whether its Standard Webhooks signature verified. */
export interface ToolCallReceived {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** The call as sent: the JSON body (POST) or the `call` query parameter (GET). */
  payload: string;
  call: { tool: string; call_id: string; chatbot_id: string; conversation_id: string; user_id: string; arguments: any };
  verified: boolean;
}

/** How the server answers one call. */
export type ToolBehaviour = (c: ToolCallReceived, res: ServerResponse) => void;

/**
 * A client's tool server on loopback: it verifies each call's signature with the standardwebhooks package and the
 * tool's secret (set once the tool is created), records the call, and answers as the test says.
 */
export class ToolServer {
  readonly calls: ToolCallReceived[] = [];
  secret = "";
  behave: ToolBehaviour = (c, res) => {
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ ok: true, tool: c.call.tool }));
  };
  private server: Server | undefined;
  port = 0;

  url(path = "/tool"): string {
    return `http://127.0.0.1:${this.port}${path}`;
  }

  async start(): Promise<void> {
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const u = new URL(req.url ?? "/", "http://x");
        const payload =
          req.method === "GET" ? (u.searchParams.get("call") ?? "") : Buffer.concat(chunks).toString("utf8");
        let verified = false;
        try {
          new Webhook(this.secret).verify(payload, {
            "webhook-id": String(req.headers["webhook-id"]),
            "webhook-timestamp": String(req.headers["webhook-timestamp"]),
            "webhook-signature": String(req.headers["webhook-signature"]),
          });
          verified = true;
        } catch {
          verified = false;
        }
        let call: ToolCallReceived["call"];
        try {
          call = JSON.parse(payload) as ToolCallReceived["call"];
        } catch {
          res.writeHead(400).end();
          return;
        }
        const c: ToolCallReceived = {
          method: req.method ?? "",
          path: u.pathname,
          headers: req.headers,
          payload,
          call,
          verified,
        };
        this.calls.push(c);
        if (!verified) {
          res.writeHead(401).end("bad signature");
          return;
        }
        this.behave(c, res);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      if (!this.server) return resolve();
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }
}

/** Closes what an agent test started: the service (its data removed), then the tool server and the model's stand-in. */
export async function closeAgentTest(
  service: { close(remove: boolean): Promise<void> } | undefined,
  ...others: ({ close(): Promise<void> } | undefined)[]
): Promise<void> {
  await service?.close(true);
  for (const o of others) await o?.close();
}
