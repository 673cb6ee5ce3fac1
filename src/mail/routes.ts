import type { PageRequest, PageRoute } from "../protocol/http/pages.js";
import type { HttpResponse } from "../protocol/http/types.js";
import { pathOf } from "../protocol/http/types.js";

const OPEN_PATH = /^\/mail\/open\/([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/;
const UNSUBSCRIBE_PATH = /^\/mail\/unsubscribe\/([^/]{1,200})$/;
const LAUNCH = /^lc_[A-Za-z0-9_-]{16,128}$/;

const HEADERS = {
  "content-type": "text/html; charset=utf-8",
  "cache-control": "no-store",
  "referrer-policy": "no-referrer",
  "x-content-type-options": "nosniff",
};

function page(
  req: PageRequest,
  res: HttpResponse,
  status: number,
  title: string,
  body: string,
  csp = "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
): void {
  const html =
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" ` +
    `content="width=device-width, initial-scale=1"><meta name="robots" content="noindex"><title>${title}</title>` +
    `</head><body style="margin:0;font-family:system-ui,sans-serif">${body}</body></html>`;
  res.writeHead(status, {
    ...HEADERS,
    "content-security-policy": csp,
    "content-length": String(Buffer.byteLength(html)),
  });
  if (req.method === "HEAD") res.end();
  else res.end(html);
}

const note = (title: string, text: string) =>
  `<main style="max-width:32rem;margin:4rem auto;padding:0 1rem"><h1 style="font-size:1.4rem">${title}</h1>` +
  `<p>${text}</p></main>`;

/** What the mail pages need: the unsubscribe of a token. */
export interface MailRouteDeps {
  unsubscribe(token: string): Promise<boolean>;
}

/**
 * The pages the mails link to: `/mail/open/{chatbot_id}?launch=…` holds the chat frame opened with the mail's
 * launch code (the code is bound to this page's origin, and works once), and `/mail/unsubscribe/{token}` asks for
 * a click (GET: a link checker following it unsubscribes nobody), then unsubscribes (POST, also the mail client's
 * one-click POST of RFC 8058).
 */
export function mailRoutes(d: MailRouteDeps): PageRoute[] {
  return [
    {
      name: "conversation opened from an e-mail",
      verbs: ["GET", "HEAD"],
      path: OPEN_PATH,
      serve: (req, res) => {
        const chatbotId = OPEN_PATH.exec(pathOf(req))![1]!;
        const launch = new URLSearchParams((req.url ?? "").split("?")[1] ?? "").get("launch") ?? "";
        if (!LAUNCH.test(launch)) {
          page(req, res, 404, "Link not found", note("This link does not work", "Ask for a new one by writing to us."));
          return;
        }
        const src = `/chatbot-iframe/${chatbotId}?launch=${encodeURIComponent(launch)}`;
        page(
          req,
          res,
          200,
          "Your conversation",
          `<iframe title="Conversation" src="${src}" style="border:0;width:100%;height:100vh;display:block"></iframe>`,
          "default-src 'none'; frame-src 'self'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; " +
            "frame-ancestors 'none'",
        );
      },
    },
    {
      name: "e-mail unsubscribe",
      verbs: ["GET", "HEAD", "POST"],
      path: UNSUBSCRIBE_PATH,
      serve: async (req, res) => {
        let token = "";
        try {
          token = decodeURIComponent(UNSUBSCRIBE_PATH.exec(pathOf(req))![1]!);
        } catch {
          // A malformed escape: no token of ours.
        }
        if (req.method !== "POST") {
          page(
            req,
            res,
            200,
            "Unsubscribe",
            `<main style="max-width:32rem;margin:4rem auto;padding:0 1rem"><h1 style="font-size:1.4rem">` +
              `Stop e-mails from us?</h1><form method="post"><button type="submit" style="font-size:1rem;` +
              `padding:.5rem 1rem">Unsubscribe</button></form></main>`,
          );
          return;
        }
        if (!(await d.unsubscribe(token))) {
          page(req, res, 404, "Link not found", note("This link does not work", "It may have been mistyped."));
          return;
        }
        page(req, res, 200, "Unsubscribed", note("You are unsubscribed", "You will receive no more e-mail from us."));
      },
    },
  ];
}
