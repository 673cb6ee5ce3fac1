import { decodeJwt } from "jose";
import type { App } from "../app.js";
import { chatbotPictureUrl } from "../domain/account/chatbot-picture.js";
import { acceptedLanguages, chooseLocale, isLanguageTag, type Locale } from "../domain/account/languages.js";
import type { PageRequest, PageRoute } from "../protocol/http/pages.js";
import { assetPages, sendAsset } from "../protocol/http/static-asset.js";
import type { HttpResponse } from "../protocol/http/types.js";
import { pathOf } from "../protocol/http/types.js";
import { frameFiles, frameScript } from "./bundle.js";
import { type DemoCredentials, demoRoutes } from "./demo.js";
import { embedScriptRoute } from "./embed-script.js";
import { CATALOGUES } from "./i18n/catalogue.js";
import { ASSET_PATH, errorPage, framePage } from "./page.js";
import { frameHeaders } from "./policy.js";
import { FRAME_CSS } from "./styles.js";

/** Settings of the frame's routes. */
export interface FrameOptions {
  /** How long the frame waits for [TOKEN_REFRESH_RESPONSE] before it shows the session as expired. */
  refreshTimeoutMs?: number;
  /** The demo's credentials once the first start has made them; /demo explains how to get them otherwise. */
  demo?: () => DemoCredentials | undefined;
}

// Every chatbot id but "assets" (the frame's scripts live there).
const FRAME_PATH = /^\/chatbot-iframe\/(?!assets\/?$)([^/]+)\/?$/;
// A chunk of the frame's script: one name under the asset path (frame.js itself has its own route, before this one).
const CHUNK_PATH = new RegExp(`^${ASSET_PATH}([^/]+\\.js)$`);
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const DEFAULT_REFRESH_TIMEOUT_MS = 10_000;

/** The chatbot claim of a JWT, read without verification; undefined when there is none to read. */
function chatbotClaim(token: string | null): string | undefined {
  if (!token) return undefined;
  try {
    const cid = decodeJwt(token).cid;
    return typeof cid === "string" ? cid : undefined;
  } catch {
    return undefined;
  }
}

function sendPage(
  req: PageRequest,
  res: HttpResponse,
  status: number,
  headers: Record<string, string>,
  html: string,
): void {
  res.writeHead(status, { ...headers, "content-length": String(Buffer.byteLength(html)) });
  if (req.method === "HEAD") res.end();
  else res.end(html);
}

/** What the frame's routes use: token checks, the chatbot's settings, addresses and the log. */
export type FrameDeps = Pick<App, "tokens" | "accounts" | "config" | "log" | "gate">;

/** The chat frame's routes: the frame page, its script and stylesheet, the host script, and the /demo host page. */
export function frameRoutes(app: FrameDeps, opts: FrameOptions = {}): PageRoute[] {
  // Bundle at start, so the first visitor does not wait; a failure is reported when the script is asked for.
  void frameScript().catch(() => undefined);
  const apiBase = app.config.baseUrl?.replace(/\/+$/, "") ?? "";
  const apiOrigin = apiBase ? new URL(apiBase).origin : undefined;
  const refreshTimeoutMs = opts.refreshTimeoutMs ?? DEFAULT_REFRESH_TIMEOUT_MS;
  const plain = {
    "content-type": "text/html; charset=utf-8",
    "cache-control": "no-store",
    "referrer-policy": "no-referrer",
    "x-content-type-options": "nosniff",
  };

  const failed = (e: Error) => {
    app.log.error("frame script could not be built", { error: e.message });
    return "the frame script could not be built; run npm run build:frame";
  };
  const assets = assetPages("frame", ASSET_PATH, FRAME_CSS, frameScript, failed);
  // The chunks frame.js loads on demand: only the bundle's own files, looked up by name (never a path on disk).
  const chunks: PageRoute = {
    name: "frame script chunk",
    verbs: ["GET", "HEAD"],
    path: CHUNK_PATH,
    serve: (req, res) =>
      frameFiles().then(
        (files) => {
          const js = files.get(CHUNK_PATH.exec(pathOf(req))![1]!);
          if (js !== undefined) sendAsset(req, res, "text/javascript; charset=utf-8", js);
          else sendPage(req, res, 404, { ...plain, "content-type": "text/plain; charset=utf-8" }, "no such script");
        },
        (e: unknown) => {
          res.writeHead(500, { "content-type": "text/plain; charset=utf-8", "cache-control": "no-store" });
          res.end(failed(e as Error));
        },
      ),
  };

  const serve = (req: PageRequest, res: HttpResponse) => {
    const chatbotId = FRAME_PATH.exec(pathOf(req))![1]!;
    const query = new URLSearchParams((req.url ?? "").split("?")[1] ?? "");
    // The frame's language: the host page's locale option, else the browser's languages, else the chatbot's default.
    const asked = query.get("locale") ?? undefined;
    const browser = acceptedLanguages(req.headers["accept-language"]);
    let locale: Locale = chooseLocale(asked, browser, "");
    let w = CATALOGUES[locale].page;
    return (async () => {
      const chatbot = UUID.test(chatbotId) ? await app.tokens.checks.chatbot(chatbotId) : undefined;
      if (!chatbot?.active) {
        sendPage(req, res, 404, plain, errorPage(w.notFoundTitle, w.notFoundText, locale));
        return;
      }
      locale = chooseLocale(asked, browser, chatbot.appearance.defaultLocale);
      w = CATALOGUES[locale].page;
      if (asked !== undefined && !isLanguageTag(asked)) {
        sendPage(
          req,
          res,
          400,
          frameHeaders(chatbot.allowedOrigins, apiOrigin),
          errorPage(w.cannotStartTitle, w.badLocale, locale),
        );
        return;
      }
      const launch = query.get("launch");
      if (launch !== null) {
        // A launch code: only the origin it was issued for may embed this page, and a code that cannot be used any
        // more (a second tab, a copied address, a page left open) gets a page that says so, and a line in the log.
        const state = await app.tokens.launchCodes.peekLaunchCode(chatbot.chatbotId, launch);
        if ("refused" in state) {
          app.log.warn("launch code refused", { why: state.refused, chatbot_id: chatbot.chatbotId, at: "frame page" });
          sendPage(
            req,
            res,
            403,
            frameHeaders(chatbot.allowedOrigins, apiOrigin),
            errorPage(w.expiredLinkTitle, w.expiredLinkText, locale),
          );
          return;
        }
        sendPage(
          req,
          res,
          200,
          frameHeaders([state.origin], apiOrigin),
          framePage({
            chatbotName: chatbot.name,
            apiBase,
            hostOrigin: state.origin,
            allowedOrigins: [state.origin],
            refreshTimeoutMs,
            appearance: chatbot.appearance,
            office: app.accounts.officeNow(chatbot),
            agentPicture: chatbotPictureUrl(chatbot),
            locale,
          }),
        );
        return;
      }
      const headers = frameHeaders(chatbot.allowedOrigins, apiOrigin);
      // The frame's token must be for the frame's chatbot (decisions §3). Every API call verifies the token fully;
      // here its chatbot claim is only compared, so an expired token still opens the frame and gets refreshed.
      const tokenChatbot = chatbotClaim(query.get("access_token"));
      if (tokenChatbot !== undefined && tokenChatbot !== chatbot.chatbotId) {
        // A credential that does not authorise this chat: an authorisation failure, not a malformed request.
        sendPage(req, res, 403, headers, errorPage(w.cannotStartTitle, w.otherChatbot, locale));
        return;
      }
      const askedOrigin = query.get("host_origin");
      let hostOrigin: string | undefined;
      if (askedOrigin !== null) {
        let origin: string | undefined;
        try {
          origin = new URL(askedOrigin).origin;
        } catch {
          origin = undefined;
        }
        // The frame will post to this origin: it must be one the chatbot's owner allowed.
        if (!origin || !chatbot.allowedOrigins.includes(origin)) {
          sendPage(req, res, 400, headers, errorPage(w.cannotStartTitle, w.badHostOrigin, locale));
          return;
        }
        hostOrigin = origin;
      } else if (chatbot.allowedOrigins.length === 1) {
        hostOrigin = chatbot.allowedOrigins[0];
      }
      sendPage(
        req,
        res,
        200,
        headers,
        framePage({
          chatbotName: chatbot.name,
          apiBase,
          hostOrigin,
          allowedOrigins: chatbot.allowedOrigins,
          refreshTimeoutMs,
          appearance: chatbot.appearance,
          office: app.accounts.officeNow(chatbot),
          agentPicture: chatbotPictureUrl(chatbot),
          locale,
        }),
      );
    })().catch((e: unknown) => {
      app.log.error("frame page failed", { error: (e as Error).message });
      if (!res.headersSent) sendPage(req, res, 503, plain, errorPage(w.unavailableTitle, w.unavailableText, locale));
      else res.end();
    });
  };
  const page: PageRoute = { name: "chat frame", verbs: ["GET", "HEAD"], path: FRAME_PATH, serve };

  return [...assets, chunks, page, embedScriptRoute(app), ...(opts.demo ? demoRoutes(app, opts.demo) : [])];
}
