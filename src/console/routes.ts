import type { App } from "../app.js";
import { chatbotPictureUrl } from "../domain/account/chatbot-picture.js";
import { acceptedLanguages, chooseLocale } from "../domain/account/languages.js";
import { framePage } from "../frame/page.js";
import { frameHeaders } from "../frame/policy.js";
import type { PageRequest, PageRoute } from "../protocol/http/pages.js";
import { assetPages } from "../protocol/http/static-asset.js";
import type { HttpResponse } from "../protocol/http/types.js";
import { AGENT_CSS } from "./agent-styles.js";
import { consoleScript } from "./bundle.js";
import { CONSOLE_ASSETS, CONSOLE_PATH, consoleHeaders, consolePage } from "./page.js";
import { CONSOLE_CSS } from "./styles.js";
import { TEAM_CSS } from "./team-styles.js";

/** What the console's pages use: the chatbots' settings (name, appearance, office hours) and the log. */
export type ConsoleDeps = Pick<App, "tokens" | "accounts" | "log">;

const UUID = "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}";
const PREVIEW_PATH = new RegExp(`^${CONSOLE_PATH}/preview/(${UUID})$`, "i");

function text(res: HttpResponse, status: number, body: string): void {
  res.writeHead(status, { "content-type": "text/plain; charset=utf-8", "cache-control": "no-store" });
  res.end(body);
}

/**
 * The console's pages: its HTML shell on /console and every path under it (the script draws the page of each path),
 * its script and stylesheet, and the embed page's live preview. Its session (sign-in, sign-out) and the preview's
 * token are RPCs of the contract (ConsoleService), served by the transcoder at POST and DELETE /console/session.
 */
export function consoleRoutes(app: ConsoleDeps): PageRoute[] {
  void consoleScript().catch(() => undefined);

  // The chat frame of one of the account's chatbots, framed by the console only, with the preview user's access
  // token that OpenPreview issued to an admin (the frame's calls verify it; here its presence is only required).
  const preview = async (req: PageRequest, res: HttpResponse): Promise<void> => {
    const chatbotId = PREVIEW_PATH.exec(req.url.split("?")[0]!)![1]!;
    const query = new URLSearchParams(req.url.split("?")[1] ?? "");
    const site = req.headers["sec-fetch-site"];
    if ((site !== undefined && site !== "same-origin") || !query.get("access_token"))
      return text(res, 401, "open the preview from the console's embed page");
    const chatbot = await app.tokens.checks.chatbot(chatbotId);
    if (!chatbot?.active) return text(res, 404, "no such chatbot");
    const html = framePage({
      chatbotName: chatbot.name,
      apiBase: "",
      hostOrigin: undefined,
      allowedOrigins: [],
      refreshTimeoutMs: 10_000,
      appearance: chatbot.appearance,
      office: app.accounts.officeNow(chatbot),
      agentPicture: chatbotPictureUrl(chatbot),
      locale: chooseLocale(
        query.get("locale") ?? undefined,
        acceptedLanguages(req.headers["accept-language"]),
        chatbot.appearance.defaultLocale,
      ),
    });
    const headers = frameHeaders([], undefined);
    headers["content-security-policy"] = headers["content-security-policy"]!.replace(
      "frame-ancestors 'none'",
      "frame-ancestors 'self'",
    );
    res.writeHead(200, { ...headers, "content-length": String(Buffer.byteLength(html)) });
    res.end(html);
  };

  const assets = assetPages("console", CONSOLE_ASSETS, CONSOLE_CSS + TEAM_CSS + AGENT_CSS, consoleScript, (e) => {
    app.log.error("console script could not be built", { error: e.message });
    return "the console script could not be built; run npm run build:browser";
  });
  const previewPage: PageRoute = { name: "console preview", verbs: ["GET"], path: PREVIEW_PATH, serve: preview };
  const shell: PageRoute = {
    name: "console shell",
    verbs: ["GET", "HEAD"],
    // Every console path but its assets (an unknown asset is 404) and its session (an RPC).
    path: new RegExp(`^${CONSOLE_PATH}(?:/(?!assets/|session$).*)?$`),
    serve: (req, res) => {
      const html = consolePage();
      res.writeHead(200, { ...consoleHeaders(), "content-length": String(Buffer.byteLength(html)) });
      if (req.method === "HEAD") res.end();
      else res.end(html);
    },
  };
  return [...assets, previewPage, shell];
}
