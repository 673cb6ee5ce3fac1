import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { getOption } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { access, Credential } from "../../gen/aiagent/v1/access_pb.js";
import { servicePages } from "../../src/cli/pages.js";
import { accessRule } from "../../src/protocol/access.js";
import type { PageRequest, PageRoute } from "../../src/protocol/http/pages.js";
import { pageMatches } from "../../src/protocol/http/pages.js";
import { SESSION_COOKIE } from "../../src/protocol/session-cookie.js";
import { idToken } from "../helpers/flows.js";
import { startServer, type TestAccount, type TestServer } from "../helpers/server.js";

// Every route the server answers passes the gate. The table is the server's own (app.routes: its request chain is
// built from it alone, with the pages `aiagent serve` adds), so a new route joins this test the day it is added.
//
// "Passes the gate" means exactly one of:
//  - an RPC of the contract: it declares its access (accessRule reads it), and is served on its JSON route by the
//    transcoder and at /<service>/<method> by the Connect adapter, both through the gate of that declaration;
//  - a page: it answers GET or HEAD (or a body-less POST of a page with a cookie of its own: the demo's refresh),
//    and the request it is handed has no body to read and no credential: no Authorization header, no cookie but
//    its own (never the console's session), so anything it needs judged it asks of the gate (app.gate). The one
//    page that sees an Authorization header is /metrics (the operator's scrape secret, no account's data). A page
//    does see its query string: the chat frame's page peeks at a launch code there (never using it up) to choose its
//    frame-ancestors, and compares an access token's chatbot claim unverified; neither grants anything.

let s: TestServer;
let a: TestAccount;
let adminToken: string;

/** A path each page answers, for the pages that answer a pattern: a page without one fails the first test. */
const samples: Record<string, () => string> = {
  "chat frame": () => `/chatbot-iframe/${a.chatbotId}`,
  "host script": () => "/embed/v1.js",
  // A name that is not one of the bundle's chunks: 404.
  "frame script chunk": () => "/chatbot-iframe/assets/no-such-chunk.js",
  "demo host page": () => "/demo",
  "console preview": () => `/console/preview/${a.chatbotId}?access_token=not-checked-here`,
  "console shell": () => "/console/inbox",
  // Any id: a page that reads no credential answers 404 for one it does not have.
  "operator pictures": () => "/v1/operator_pictures/0123456789abcdef",
  "chatbot pictures": () => "/v1/chatbot_pictures/0123456789abcdef",
  attachments: () => "/v1/attachments/0123456789abcdef0123456789abcdef",
  // Issue 46: the pages the e-mails link to (a code or token that is not one of ours: refused by the page).
  "conversation opened from an e-mail": () => `/mail/open/${a.chatbotId}?launch=lc_not-a-code-of-ours-x`,
  "e-mail unsubscribe": () => `/mail/unsubscribe/us_${"x".repeat(43)}`,
};

// POST pages that read no body and no cookie: the mail client's one-click unsubscribe (RFC 8058), whose token is in
// its address (a secret of the one mail it came in), like a launch code.
const BODYLESS_POSTS = new Set(["e-mail unsubscribe"]);

const samplePath = (p: PageRoute) => (typeof p.path === "string" ? p.path : samples[p.name]?.());
const pages = () => s.app.routes.pages;

beforeAll(async () => {
  s = await startServer({
    env: { AIAGENT_METRICS_TOKEN: "scrape-secret-for-the-table" },
    overrides: { extraRoutes: (app) => servicePages(app, () => ({ chatbotId: a.chatbotId, clientApiKey: a.apiKey })) },
  });
  a = await s.account({ origins: [new URL(s.url).origin] });
  adminToken = await idToken(s.url, a);
});
afterAll(() => s.close(true));

describe("the route table", () => {
  it("holds only RPCs with declared access and pages that answer GET (no page shadows an RPC)", () => {
    const rpcs = new Set(s.app.routes.rpc);
    expect(s.app.routes.json.length).toBeGreaterThan(0);
    for (const r of s.app.routes.json) {
      const name = `${r.verb} ${r.template}`;
      expect(() => accessRule(r.method), name).not.toThrow();
      expect(rpcs.has(r.method), `${name} is an RPC the server serves`).toBe(true);
    }
    for (const m of rpcs) expect(() => accessRule(m), `${m.parent.typeName}/${m.name}`).not.toThrow();
    const names = new Set<string>();
    for (const p of pages()) {
      expect(names.has(p.name), `${p.name} is named once`).toBe(false);
      names.add(p.name);
      expect(samplePath(p), `${p.name} needs a sample path`).toBeDefined();
      const verbs = [...p.verbs].sort().join(",");
      if (BODYLESS_POSTS.has(p.name)) expect(verbs, p.name).toBe("GET,HEAD,POST");
      else if (p.verbs.includes("POST"))
        expect(p.ownCookie, `${p.name}: a POST page has a session of its own`).toBeDefined();
      else expect(["GET", "GET,HEAD"], `${p.name} answers ${verbs}`).toContain(verbs);
      expect(p.ownCookie, `${p.name} never reads the console's session`).not.toBe(SESSION_COOKIE);
      if (p.operatorSecret) expect(p.path, `${p.name} sees Authorization`).toBe("/metrics");
      for (const r of s.app.routes.json)
        if (!r.template.includes("{"))
          expect(pageMatches(p, r.template), `${p.name} shadows ${r.template}`).toBe(false);
      for (const m of rpcs)
        expect(pageMatches(p, `/${m.parent.typeName}/${m.name}`), `${p.name} shadows ${m.name}`).toBe(false);
    }
    // What `aiagent serve` answers beside the API: probes, the reference, metrics, the frame, the demo, the console.
    for (const n of ["liveness probe", "metrics", "chat frame", "demo token refresh", "console shell"])
      expect(names, n).toContain(n);
  });

  it("every JSON route of an RPC that takes a token refuses a call without one (or its input first)", async () => {
    for (const r of s.app.routes.json) {
      const d = getOption(r.method, access);
      const bearer = d.credentials.includes(Credential.ACCESS_TOKEN) || d.credentials.includes(Credential.ID_TOKEN);
      if (!bearer && !d.sameOrigin) continue;
      const path = r.template.replace(/\{[^}]+\}/g, a.chatbotId);
      const res = await fetch(`${s.url}${path}`, {
        method: r.verb,
        headers: { "content-type": "application/json" },
        ...(r.verb === "GET" || r.verb === "DELETE" ? {} : { body: "{}" }),
        signal: AbortSignal.timeout(10_000),
      });
      await res.body?.cancel();
      // The contract's field rules run before the gate: a request they refuse is 400; never an answer.
      const expected = d.sameOrigin && !bearer ? [403] : [400, 401];
      expect(expected, `${r.verb} ${r.template} answered ${res.status}`).toContain(res.status);
    }
  });

  it("each page is handed no body and no credential, however the request came", async () => {
    const seen = new Map<string, PageRequest>();
    for (const p of pages()) {
      const serve = p.serve;
      (p as { serve: PageRoute["serve"] }).serve = (req, res) => {
        seen.set(p.name, req);
        return serve(req, res);
      };
    }
    for (const p of pages()) {
      const verb = p.verbs[0]!;
      const res = await fetch(`${s.url}${samplePath(p)}`, {
        method: verb,
        redirect: "manual",
        headers: {
          authorization: `Bearer ${adminToken}`,
          cookie: `${SESSION_COOKIE}=${adminToken}; aiagent_demo=${"d".repeat(32)}; other=1`,
          "x-aiagent-csrf": "1",
          "x-requested-with": "aiagent-host",
          ...(verb === "POST" ? { "content-type": "application/json" } : {}),
        },
        ...(verb === "POST" ? { body: JSON.stringify({ refresh_token: "in a body no page reads" }) } : {}),
        signal: AbortSignal.timeout(20_000),
      });
      await res.body?.cancel();
      const view = seen.get(p.name);
      expect(view, `${p.name} served ${samplePath(p)}`).toBeDefined();
      expect(Object.keys(view!).sort(), p.name).toEqual(["headers", "method", "peer", "url"]);
      expect(view!.headers.authorization, p.name).toBe(p.operatorSecret ? `Bearer ${adminToken}` : undefined);
      expect(view!.headers.cookie, p.name).toBe(p.ownCookie ? `${p.ownCookie}=${"d".repeat(32)}` : undefined);
    }
  });

  it("a page answers 405 with a JSON error to a verb it does not take", async () => {
    for (const p of pages()) {
      const res = await fetch(`${s.url}${samplePath(p)}`, { method: "PUT", body: "{}" });
      expect(res.status, p.name).toBe(405);
      expect(res.headers.get("allow"), p.name).toBe(p.verbs.join(", "));
      expect(((await res.json()) as { code: string }).code).toBe("unimplemented");
    }
  });

  it("the console's and the frame's route files judge nothing themselves", () => {
    const root = join(import.meta.dirname, "../../src");
    for (const dir of ["console", "frame"])
      for (const file of readdirSync(join(root, dir)).filter((f) => f.endsWith(".ts"))) {
        const text = readFileSync(join(root, dir, file), "utf8");
        expect(text, `${dir}/${file}`).not.toMatch(/from "\.\.\/protocol\/services\//);
        expect(text, `${dir}/${file}`).not.toMatch(/\broleAllows\b|token-limits|readBody|JSON\.parse\(/);
      }
  });
});
