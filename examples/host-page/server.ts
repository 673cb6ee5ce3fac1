/**
 * A client's side of the AI agent integration, as a client would write it: a tiny Node server (no framework) that
 * keeps the client API key and each user's refresh token on the server, and a page that embeds the chat frame and
 * answers its [TOKEN_REFRESH] messages through this server.
 *
 * Run: AIAGENT_URL=http://127.0.0.1:8080 AIAGENT_CLIENT_API_KEY=cak_… AIAGENT_CHATBOT_ID=… npx tsx examples/host-page/server.ts
 * The chatbot must list this page's origin (default http://127.0.0.1:3000) among its allowed origins.
 */
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { pathToFileURL } from "node:url";
import { AiAgentError, getAccessToken, refreshAccessToken } from "./aiagent-client.js";

/** What the host page server needs. */
export interface HostPageOptions {
  /** The AI agent service, called server to server ({base_url}). */
  serviceUrl: string;
  /** Where the chat frame is served ({app_url}); the service URL when not given. */
  appUrl?: string;
  /** The client API key: a secret that never leaves this server. */
  clientApiKey: string;
  chatbotId: string;
  /**
   * This page's own origin, sent to the frame as `host_origin` so it knows where to send [TOKEN_REFRESH].
   * Needed only when the chatbot allows several origins; the service checks it is one of them.
   */
  pageOrigin?: string;
  /** 0 picks a free port. */
  port: number;
  host?: string;
}

/** A running host page server. */
export interface HostPage {
  url: string;
  close(): Promise<void>;
}

/** One visitor of the page. In a real site the user comes from your own login. */
interface Session {
  userId: string;
  /** Kept here, in the server's memory only: never sent to the browser. */
  refreshToken: string | undefined;
}

const MAX_SESSIONS = 10_000;
const COOKIE = "sid";
const HOST_SCRIPT = readFileSync(new URL("./public/host.js", import.meta.url), "utf8");

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function page(frameUrl: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Example Shop</title>
<style>
  body { margin: 0; font: 16px/1.5 system-ui, sans-serif; color: #1d2430; background: #f4f6fa; }
  header { padding: 20px 32px; background: #1d2430; color: #fff; }
  main { display: grid; grid-template-columns: minmax(0, 1fr) 380px; gap: 32px; padding: 32px; max-width: 1100px; margin: 0 auto; }
  .chat { height: 560px; border: 0; border-radius: 16px; background: #fff; box-shadow: 0 10px 30px rgb(20 30 50 / 0.15); width: 100%; }
  @media (max-width: 800px) { main { grid-template-columns: 1fr; } }
</style>
</head>
<body>
<header><strong>Example Shop</strong></header>
<main>
  <section><h1>Welcome</h1><p>Questions about shipping, returns or opening hours? Ask our assistant.</p></section>
  <iframe id="aiagent-chat" class="chat" title="Chat with our assistant" src="${escapeHtml(frameUrl)}" allow="clipboard-write"></iframe>
</main>
<script src="/host.js"></script>
</body>
</html>
`;
}

/** Starts the host page server. */
export async function startHostPage(o: HostPageOptions): Promise<HostPage> {
  const appUrl = o.appUrl ?? o.serviceUrl;
  const sessions = new Map<string, Session>();

  function session(req: IncomingMessage, res: ServerResponse, create: boolean): Session | undefined {
    const sid = /(?:^|;\s*)sid=([A-Za-z0-9_-]{20,64})/.exec(req.headers.cookie ?? "")?.[1];
    const found = sid ? sessions.get(sid) : undefined;
    if (found || !create) return found;
    const id = randomBytes(24).toString("base64url");
    const s: Session = { userId: `visitor-${randomBytes(6).toString("hex")}`, refreshToken: undefined };
    if (sessions.size >= MAX_SESSIONS) sessions.delete(sessions.keys().next().value!);
    sessions.set(id, s);
    res.setHeader("set-cookie", `${COOKIE}=${id}; Path=/; HttpOnly; SameSite=Lax`);
    return s;
  }

  /** An access token for the page: from the stored refresh token if it still works, else a new token pair. */
  async function accessTokenFor(s: Session): Promise<string> {
    if (s.refreshToken) {
      try {
        return (
          await refreshAccessToken(o.serviceUrl, {
            userId: s.userId,
            chatbotId: o.chatbotId,
            refreshToken: s.refreshToken,
          })
        ).access_token;
      } catch (e) {
        if (!(e instanceof AiAgentError) || e.status === 0) throw e;
      }
    }
    const t = await getAccessToken(o.serviceUrl, {
      userId: s.userId,
      chatbotId: o.chatbotId,
      clientApiKey: o.clientApiKey,
    });
    s.refreshToken = t.refresh_token;
    return t.access_token;
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? "/").split("?")[0];
    if (req.method === "GET" && path === "/") {
      const s = session(req, res, true)!;
      const token = await accessTokenFor(s);
      const frameUrl = `${appUrl}/chatbot-iframe/${encodeURIComponent(o.chatbotId)}?${new URLSearchParams({ user_id: s.userId, access_token: token, ...(o.pageOrigin ? { host_origin: o.pageOrigin } : {}) })}`;
      res.writeHead(200, {
        "content-type": "text/html; charset=utf-8",
        "cache-control": "no-store",
        "referrer-policy": "strict-origin-when-cross-origin",
      });
      res.end(page(frameUrl));
      return;
    }
    if (req.method === "GET" && path === "/host.js") {
      res.writeHead(200, { "content-type": "text/javascript; charset=utf-8", "cache-control": "no-cache" });
      res.end(HOST_SCRIPT);
      return;
    }
    if (req.method === "POST" && path === "/aiagent/refresh") {
      // A custom header cannot be sent cross-site without a CORS preflight, which this server never grants.
      const s = req.headers["x-requested-with"] === "aiagent-host" ? session(req, res, false) : undefined;
      if (!s?.refreshToken) return json(res, 401, { error: "no session" });
      try {
        const t = await refreshAccessToken(o.serviceUrl, {
          userId: s.userId,
          chatbotId: o.chatbotId,
          refreshToken: s.refreshToken,
        });
        // Only the access token goes to the browser.
        return json(res, 200, { access_token: t.access_token, expires_at: t.expires_at });
      } catch (e) {
        return json(res, e instanceof AiAgentError && e.status !== 0 ? 401 : 502, {
          error: "could not refresh the chat session",
        });
      }
    }
    json(res, 404, { error: "not found" });
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((e: unknown) => {
      process.stderr.write(`host page: ${(e as Error).message}\n`);
      if (!res.headersSent) json(res, 502, { error: "the chat service is not available" });
      else res.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(o.port, o.host ?? "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${o.host ?? "127.0.0.1"}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json", "cache-control": "no-store" });
  res.end(JSON.stringify(body));
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const need = (name: string): string => {
    const v = process.env[name];
    if (!v) {
      process.stderr.write(`${name} is required\n`);
      process.exit(2);
    }
    return v;
  };
  const hp = await startHostPage({
    serviceUrl: process.env.AIAGENT_URL ?? "http://127.0.0.1:8080",
    ...(process.env.AIAGENT_APP_URL ? { appUrl: process.env.AIAGENT_APP_URL } : {}),
    clientApiKey: need("AIAGENT_CLIENT_API_KEY"),
    chatbotId: need("AIAGENT_CHATBOT_ID"),
    ...(process.env.PAGE_ORIGIN ? { pageOrigin: process.env.PAGE_ORIGIN } : {}),
    port: Number(process.env.PORT ?? 3000),
  });
  process.stdout.write(`host page: ${hp.url}/\n`);
}
