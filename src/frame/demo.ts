import { randomBytes } from "node:crypto";
import { TokenService } from "../../gen/aiagent/v1/token_service_pb.js";
import type { App } from "../app.js";
import { DEMO_QUESTIONS } from "../bootstrap.js";
import { serverCall } from "../protocol/gate.js";
import type { PageRequest, PageRoute } from "../protocol/http/pages.js";
import type { HttpResponse } from "../protocol/http/types.js";
import { sendJson } from "../protocol/http/types.js";
import { errorPage, escapeHtml } from "./page.js";

/** What the demo needs from the first start: the demo chatbot and the API key that was printed once. */
export interface DemoCredentials {
  chatbotId: string;
  clientApiKey: string;
}

interface Session {
  userId: string;
  refreshToken: string | undefined;
}

const MAX_SESSIONS = 1000;
const COOKIE = "aiagent_demo";

// The host page's script: the same as examples/host-page/public/host.js, with the demo's refresh route.
const HOST_SCRIPT = `(function () {
  var frame = document.getElementById("aiagent-chat");
  var frameOrigin = new URL(frame.src).origin;
  window.addEventListener("message", function (event) {
    if (event.source !== frame.contentWindow || event.origin !== frameOrigin) return;
    if (!event.data || event.data.type !== "[TOKEN_REFRESH]") return;
    fetch("/demo/refresh", { method: "POST", credentials: "same-origin", headers: { "x-requested-with": "aiagent-host" } })
      .then(function (res) { return res.ok ? res.json() : null; })
      .then(function (body) {
        if (!body || typeof body.access_token !== "string") return;
        frame.contentWindow.postMessage({ type: "[TOKEN_REFRESH_RESPONSE]", access_token: body.access_token }, frameOrigin);
      })
      .catch(function () {});
  });
})();
`;

function hostPage(frameUrl: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>AI agent demo</title>
<style>
  body { margin: 0; font: 16px/1.5 system-ui, sans-serif; color: #1d2430; background: #f4f6fa; }
  main { display: grid; grid-template-columns: minmax(0, 1fr) 380px; gap: 32px; padding: 32px; max-width: 1100px; margin: 0 auto; }
  iframe { width: 100%; height: 560px; border: 0; border-radius: 16px; background: #fff; box-shadow: 0 10px 30px rgb(20 30 50 / 0.15); }
  code { background: #e6eaf2; padding: 1px 5px; border-radius: 4px; }
  @media (max-width: 800px) { main { grid-template-columns: 1fr; } }
</style>
</head>
<body>
<main>
  <section>
    <h1>AI agent demo</h1>
    <p>This page plays the client's website. Its server holds the API key and the refresh token; the chat frame on the right
    gets only a short-lived access token and asks this page for a new one (<code>[TOKEN_REFRESH]</code>) when it expires.</p>
    <p>Try: ${DEMO_QUESTIONS.map((q) => `<em>${escapeHtml(q)}</em>`).join(", ")}</p>
  </section>
  <iframe id="aiagent-chat" title="Chat with the demo assistant" src="${escapeHtml(frameUrl)}"></iframe>
</main>
<script src="/demo/host.js"></script>
</body>
</html>
`;
}

const NOT_KNOWN = [
  "The demo runs when the service starts outside production with its demo account (made on the first start of an empty",
  "database; each later start issues the demo a new API key). This database has no demo account: start on a fresh",
  "database (move ./data/aiagent.db or your AIAGENT_DB aside) to get one;",
  "or make a key (`./bin/aiagent api-key create --email you@example.com`) and a chatbot that allows your page's origin",
  "(`./bin/aiagent chatbot create --allowed-origin …`) and run examples/host-page, as docs/embedding.md shows.",
].join(" ");

function requestOrigin(req: PageRequest): string | undefined {
  const host = req.headers.host;
  return typeof host === "string" && /^[a-z0-9.\-[\]:]+$/i.test(host) ? `http://${host}` : undefined;
}

/**
 * The dev bootstrap's demo host page at /demo: the same flow as examples/host-page, served by the service itself for
 * the demo chatbot made on first start. The "client server" part (tokens, refresh) runs here, server-side.
 */
export function demoRoutes(
  app: Pick<App, "tokens" | "config" | "log" | "gate">,
  credentials: () => DemoCredentials | undefined,
): PageRoute[] {
  const sessions = new Map<string, Session>();

  function session(req: PageRequest, res: HttpResponse, create: boolean): Session | undefined {
    const sid = new RegExp(`(?:^|;\\s*)${COOKIE}=([A-Za-z0-9_-]{20,64})`).exec(String(req.headers.cookie ?? ""))?.[1];
    const found = sid ? sessions.get(sid) : undefined;
    if (found || !create) return found;
    const id = randomBytes(24).toString("base64url");
    const s: Session = { userId: `demo-visitor-${randomBytes(6).toString("hex")}`, refreshToken: undefined };
    if (sessions.size >= MAX_SESSIONS) sessions.delete(sessions.keys().next().value!);
    sessions.set(id, s);
    res.setHeader("set-cookie", `${COOKIE}=${id}; Path=/demo; HttpOnly; SameSite=Lax`);
    return s;
  }

  // The demo plays the client's server: it asks for tokens through the same RPCs (and limits) as any server would.
  async function accessToken(req: PageRequest, c: DemoCredentials, s: Session): Promise<string> {
    if (s.refreshToken) {
      try {
        return (await refreshed(req, c, s)).accessToken;
      } catch {
        // expired or revoked: start a new token pair below
      }
    }
    const t = await app.gate.call(
      TokenService.method.getAccessToken,
      { userId: s.userId, chatbotId: c.chatbotId, clientApiKey: c.clientApiKey },
      serverCall(req),
    );
    s.refreshToken = t.data?.refreshToken;
    return t.data?.accessToken ?? "";
  }

  async function refreshed(
    req: PageRequest,
    c: DemoCredentials,
    s: Session,
  ): Promise<{ accessToken: string; expiresAt: number }> {
    const t = await app.gate.call(
      TokenService.method.refreshToken,
      { userId: s.userId, chatbotId: c.chatbotId, refreshToken: s.refreshToken ?? "" },
      serverCall(req),
    );
    // With rotation on, the refresh token presented is retired: keep its successor.
    if (t.data?.refreshToken) s.refreshToken = t.data.refreshToken;
    return { accessToken: t.data?.accessToken ?? "", expiresAt: Number(t.data?.expiresAt ?? 0) };
  }

  async function page(req: PageRequest, res: HttpResponse): Promise<void> {
    const c = credentials();
    if (!c) {
      res.writeHead(200, { "content-type": "text/html; charset=utf-8", "cache-control": "no-store" });
      res.end(errorPage("The demo is not available now", NOT_KNOWN));
      return;
    }
    const chatbot = await app.tokens.checks.chatbot(c.chatbotId);
    const appUrl = app.config.appUrl?.replace(/\/+$/, "");
    const here = requestOrigin(req);
    // The frame may only be embedded by the chatbot's allowed origins: send a visitor on another host name there.
    if (!appUrl && chatbot && here && !chatbot.allowedOrigins.includes(here) && chatbot.allowedOrigins[0]) {
      res.writeHead(302, { location: `${chatbot.allowedOrigins[0]}/demo`, "cache-control": "no-store" });
      res.end();
      return;
    }
    const s = session(req, res, true)!;
    const token = await accessToken(req, c, s);
    const frameUrl = `${appUrl ?? ""}/chatbot-iframe/${c.chatbotId}?${new URLSearchParams({ user_id: s.userId, access_token: token })}`;
    res.writeHead(200, {
      "content-type": "text/html; charset=utf-8",
      "cache-control": "no-store",
      "referrer-policy": "no-referrer",
    });
    res.end(hostPage(frameUrl));
  }

  async function refresh(req: PageRequest, res: HttpResponse): Promise<void> {
    const c = credentials();
    const s = c && req.headers["x-requested-with"] === "aiagent-host" ? session(req, res, false) : undefined;
    if (!c || !s?.refreshToken) return sendJson(res, 401, { error: "no demo session: reload the page" });
    let t: { accessToken: string; expiresAt: number };
    try {
      t = await refreshed(req, c, s);
    } catch {
      return sendJson(res, 401, { error: "the demo session cannot be refreshed: reload the page" });
    }
    sendJson(res, 200, { access_token: t.accessToken, expires_at: t.expiresAt }, { "cache-control": "no-store" });
  }

  // Outside production only: in production /demo is not there at all (404, as any unknown path).
  const routes: PageRoute[] = [
    { name: "demo host page", verbs: ["GET", "HEAD"], path: /^\/demo\/?$/, ownCookie: COOKIE, serve: page },
    {
      name: "demo host script",
      verbs: ["GET", "HEAD"],
      path: "/demo/host.js",
      serve: (_req, res) => {
        res.writeHead(200, { "content-type": "text/javascript; charset=utf-8", "cache-control": "no-cache" });
        res.end(HOST_SCRIPT);
      },
    },
    // A POST with no body: the demo's own cookie names the visitor's session, the gate judges its refresh token.
    { name: "demo token refresh", verbs: ["POST"], path: "/demo/refresh", ownCookie: COOKIE, serve: refresh },
  ];
  return app.config.production ? [] : routes;
}
