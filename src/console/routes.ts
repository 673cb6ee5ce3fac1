import type { TLSSocket } from "node:tls";
import type { App } from "../app.js";
import { roleAllows } from "../domain/caller.js";
import { isDomainError } from "../domain/errors.js";
import { framePage } from "../frame/page.js";
import { frameHeaders } from "../frame/policy.js";
import { callOrigin } from "../protocol/audited.js";
import type { Call } from "../protocol/call.js";
import { codeName, HTTP_STATUS, toConnectError } from "../protocol/errors.js";
import { sendAsset } from "../protocol/http/static-asset.js";
import { type HttpRequest, type HttpResponse, pathOf, type Route, sendJson } from "../protocol/http/types.js";
import { cookieValue, SESSION_COOKIE, sameOriginRequest, sessionCookie } from "../protocol/session-cookie.js";
import { limited } from "../protocol/token-limits.js";
import { consoleScript } from "./bundle.js";
import { CONSOLE_ASSETS, CONSOLE_PATH, consoleHeaders, consolePage } from "./page.js";
import { CONSOLE_CSS } from "./styles.js";

/** What the console's routes use: the token service and its limits, the addresses, the log. */
export type ConsoleDeps = Pick<App, "tokens" | "accounts" | "tokenGuard" | "config" | "log">;

const SESSION_PATH = `${CONSOLE_PATH}/session`;
const PREVIEW_PATH = /^\/console\/preview\/([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/i;
const MAX_SESSION_BODY = 4096;

function header(req: HttpRequest): (name: string) => string | undefined {
  return (name) => {
    const v = req.headers[name];
    return Array.isArray(v) ? v.join(", ") : v;
  };
}

function readBody(req: HttpRequest, max: number): Promise<string> {
  return new Promise((resolve, reject) => {
    let size = 0;
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => {
      size += c.length;
      if (size > max) {
        reject(new Error("too large"));
        req.destroy();
      } else chunks.push(c);
    });
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

function fail(res: HttpResponse, status: number, code: string, message: string, extra: Record<string, string> = {}) {
  sendJson(res, status, { code, message }, { "cache-control": "no-store", ...extra });
}

/**
 * The console: its HTML shell on /console and every path under it (the script draws the page of each path), its
 * script and stylesheet, and its session: `POST /console/session` trades an e-mail and password for an ID token in
 * an HttpOnly cookie (rate limited exactly like get_id_token), `DELETE /console/session` clears it.
 */
export function consoleRoutes(app: ConsoleDeps): Route[] {
  void consoleScript().catch(() => undefined);
  const https = /^https:/i.test(app.config.appUrl ?? app.config.baseUrl ?? "");
  const cookie = (value: string, maxAge: number, req: HttpRequest) => {
    const secure = https || (req.socket as TLSSocket | undefined)?.encrypted === true;
    return sessionCookie(value, maxAge, secure);
  };

  const session = async (req: HttpRequest, res: HttpResponse): Promise<void> => {
    // Only the console's own script can send the CSRF header: a form or a page elsewhere cannot sign anyone in or out.
    if (!sameOriginRequest(header(req)))
      return fail(res, 403, "permission_denied", "the console's session is opened only by the console's own pages");
    if (req.method === "DELETE") {
      // Signing out revokes the cookie's token itself: a copy of it (as a cookie or a bearer token) is refused too.
      const token = cookieValue(header(req)("cookie"), SESSION_COOKIE);
      if (token) await app.tokens.signOut(token);
      res.writeHead(204, { "set-cookie": cookie("", 0, req), "cache-control": "no-store" });
      res.end();
      return;
    }
    if (!/^application\/json\b/i.test(req.headers["content-type"] ?? ""))
      return fail(res, 415, "invalid_argument", "the body must be application/json");
    let input: { email?: unknown; password?: unknown };
    try {
      input = JSON.parse(await readBody(req, MAX_SESSION_BODY)) as typeof input;
    } catch {
      return fail(res, 400, "invalid_argument", "the body must be a JSON object with email and password");
    }
    const email = typeof input.email === "string" ? input.email.trim() : "";
    const password = typeof input.password === "string" ? input.password : "";
    if (!email || !password) return fail(res, 400, "invalid_argument", "email and password are required");
    const call: Call = {
      header: header(req),
      queryAccessToken: undefined,
      peer: req.socket?.remoteAddress ?? "",
      signal: new AbortController().signal,
      setResponseHeader: () => undefined,
      encoder: undefined,
    };
    try {
      const t = await limited(app.tokenGuard, call, { target: `account:${email}`, password: true }, () =>
        app.tokens.getIdToken({ email, password, origin: callOrigin(call) }),
      );
      const maxAge = Math.max(0, Math.floor((t.expiresAt - Date.now()) / 1000));
      res.writeHead(204, { "set-cookie": cookie(t.idToken, maxAge, req), "cache-control": "no-store" });
      res.end();
    } catch (e) {
      if (!isDomainError(e)) app.log.error("console sign-in failed", { error: (e as Error).message });
      const err = toConnectError(e, app.log);
      const retry = err.metadata.get("retry-after");
      fail(res, HTTP_STATUS[err.code], codeName(err.code), err.rawMessage, retry ? { "retry-after": retry } : {});
    }
  };

  // The embed page's live preview: the chat frame of one of the account's chatbots, for an admin signed in to the
  // console, with an access token for a preview user (no API key, no refresh token), framed by the console only.
  const preview = async (req: HttpRequest, res: HttpResponse, chatbotId: string): Promise<void> => {
    const text = (status: number, body: string) => {
      res.writeHead(status, { "content-type": "text/plain; charset=utf-8", "cache-control": "no-store" });
      res.end(body);
    };
    const site = req.headers["sec-fetch-site"];
    const token = cookieValue(header(req)("cookie"), SESSION_COOKIE);
    if ((site !== undefined && site !== "same-origin") || !token) return text(401, "sign in to the console first");
    let caller: Awaited<ReturnType<typeof app.tokens.authenticateAccount>>["caller"];
    try {
      caller = (await app.tokens.authenticateAccount(token)).caller;
    } catch {
      return text(401, "sign in to the console first");
    }
    if (!roleAllows(caller.role, "admin")) return text(403, "the preview is for the account's admins");
    const chatbot = await app.tokens.chatbot(chatbotId);
    if (!chatbot?.active || chatbot.accountId !== caller.accountId) return text(404, "no such chatbot");
    const query = new URLSearchParams((req.url ?? "").split("?")[1] ?? "");
    if (!query.get("access_token")) {
      const t = await app.tokens.previewAccessToken({
        accountId: caller.accountId,
        chatbotId,
        userId: `console-preview:${caller.email}`,
      });
      // The frame's script reads its token from the address, then removes it from there.
      res.writeHead(303, {
        location: `${CONSOLE_PATH}/preview/${chatbotId}?access_token=${encodeURIComponent(t.accessToken)}`,
        "cache-control": "no-store",
        "referrer-policy": "no-referrer",
      });
      res.end();
      return;
    }
    const html = framePage({
      chatbotName: chatbot.name,
      apiBase: "",
      hostOrigin: undefined,
      allowedOrigins: [],
      refreshTimeoutMs: 10_000,
      appearance: chatbot.appearance,
      office: app.accounts.officeNow(chatbot),
    });
    const headers = frameHeaders([], undefined);
    headers["content-security-policy"] = headers["content-security-policy"]!.replace(
      "frame-ancestors 'none'",
      "frame-ancestors 'self'",
    );
    res.writeHead(200, { ...headers, "content-length": String(Buffer.byteLength(html)) });
    res.end(html);
  };

  const route: Route = (req, res) => {
    const path = pathOf(req);
    const p = PREVIEW_PATH.exec(path);
    if (p && req.method === "GET") {
      preview(req, res, p[1]!).catch((e: unknown) => {
        app.log.error("console preview failed", { error: (e as Error).message });
        if (!res.headersSent) fail(res, 500, "internal", "internal error");
        else res.end();
      });
      return true;
    }
    if (path !== CONSOLE_PATH && !path.startsWith(`${CONSOLE_PATH}/`)) return false;
    if (path === SESSION_PATH) {
      if (req.method !== "POST" && req.method !== "DELETE") {
        fail(res, 405, "invalid_argument", "use POST to sign in, DELETE to sign out", { allow: "POST, DELETE" });
        return true;
      }
      session(req, res).catch((e: unknown) => {
        app.log.error("console session failed", { error: (e as Error).message });
        if (!res.headersSent) fail(res, 500, "internal", "internal error");
        else res.end();
      });
      return true;
    }
    if (req.method !== "GET" && req.method !== "HEAD") return false;
    if (path === `${CONSOLE_ASSETS}console.css`) {
      sendAsset(req, res, "text/css; charset=utf-8", CONSOLE_CSS);
      return true;
    }
    if (path === `${CONSOLE_ASSETS}console.js`) {
      consoleScript().then(
        (js) => sendAsset(req, res, "text/javascript; charset=utf-8", js),
        (e: unknown) => {
          app.log.error("console script could not be built", { error: (e as Error).message });
          res.writeHead(500, { "content-type": "text/plain; charset=utf-8", "cache-control": "no-store" });
          res.end("the console script could not be built; run npm run build:browser");
        },
      );
      return true;
    }
    if (path.startsWith(CONSOLE_ASSETS)) return false;
    const html = consolePage();
    res.writeHead(200, { ...consoleHeaders(), "content-length": String(Buffer.byteLength(html)) });
    if (req.method === "HEAD") res.end();
    else res.end(html);
    return true;
  };
  return [route];
}
