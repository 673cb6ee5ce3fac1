import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { connect as http2Connect } from "node:http2";
import { connect as netConnect } from "node:net";
import { resolve } from "node:path";
import { type DescService, ScalarType } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { textRules } from "../../src/protocol/rest/field-rules.js";
import { consoleAndFrameRoutes } from "../helpers/console-routes.js";
import { idToken, issueTokens, send } from "../helpers/flows.js";
import { selectRows } from "../helpers/rows.js";
import { startServer, type TestServer } from "../helpers/server.js";
import {
  BAD_ESCAPES,
  contractServices,
  HOSTILE_SERVER,
  type HostileCase,
  hostileTable,
  type Presented,
  routeKey,
} from "./hostile-table.js";
import { expectNoSecrets, refusedSignIn } from "./support.js";

// The hostile table generated from the contract (hostile-table.ts), on the back end this run uses (SQLite, or
// PostgreSQL in the api-postgres project): for every case no 5xx, no hung connection, the process still serving,
// a 4xx that names the field, and not one row changed.

const services: DescService[] = await contractServices();
const table = hostileTable(services);
const CASE_TIMEOUT_MS = 10_000;

let s: TestServer;
const credential: Record<Presented, string> = { none: "", access: "", admin: "" };
const secrets = new Set<string>();

beforeAll(async () => {
  // With the console's routes too, as `aiagent serve` has them.
  s = await startServer({
    ...HOSTILE_SERVER,
    overrides: { ...HOSTILE_SERVER.overrides, extraRoutes: consoleAndFrameRoutes },
  });
  const a = await s.account();
  const t = await issueTokens(s.url, a, "hostile-table-user");
  credential.access = t.access_token;
  credential.admin = await idToken(s.url, a);
  await send(s.url, t.access_token, "hello");
  secrets.add(a.apiKey).add(a.password).add(t.access_token).add(t.refresh_token).add(credential.admin);
});

afterAll(async () => {
  expectNoSecrets(s.logs, secrets);
  await s.close(true);
});

/** A fingerprint of the rows of each table of the back end this run uses (a change shows which table). */
async function snapshot(): Promise<Record<string, string>> {
  const sqlite = s.app.config.databaseUrl === undefined;
  const tables = await selectRows<{ name: string }>(
    s.app,
    sqlite
      ? "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name"
      : "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name",
  );
  const out: Record<string, string> = {};
  for (const { name } of tables) {
    // The abuse limits' shared counters (PostgreSQL) count requests, refused ones too: that is what they are for.
    if (name === "rate_limits") continue;
    const rows = (await selectRows(s.app, `SELECT * FROM "${name}"`))
      .filter((r) => !refusedSignIn(name, r))
      .map((r) => JSON.stringify(r))
      .sort();
    out[name] = createHash("sha256").update(rows.join("\n")).digest("hex");
  }
  return out;
}

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** Sends one case over HTTP/1.1 exactly as written; rejects when no answer comes in time (a hung connection). */
function sendCase(c: HostileCase): Promise<Answer> {
  const u = new URL(s.url);
  const headers: Record<string, string> = { ...c.headers };
  if (c.presented !== "none") headers.authorization = `Bearer ${credential[c.presented]}`;
  if (c.body !== undefined) headers["content-length"] = String(Buffer.byteLength(c.body));
  return new Promise((resolvePromise, reject) => {
    const req = httpRequest(
      { host: u.hostname, port: u.port, method: c.method, path: c.path, headers, timeout: CASE_TIMEOUT_MS },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (d: Buffer) => chunks.push(d));
        res.on("end", () =>
          resolvePromise({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
        );
        res.on("error", reject);
      },
    );
    req.on("timeout", () => req.destroy(new Error(`no answer within ${CASE_TIMEOUT_MS} ms (a hung connection)`)));
    req.on("error", reject);
    req.end(c.body);
  });
}

/** The error an answer carries, whatever the protocol: its code or status and its message. */
function errorOf(c: HostileCase, r: Answer): { failed: boolean; serverFault: boolean; message: string } {
  if (c.grpcWeb) {
    // gRPC-Web: the status travels in the trailer frame at the end of the body (or in the headers).
    const text = r.body.toString("latin1");
    const status = Number(r.headers["grpc-status"] ?? /grpc-status:\s*(\d+)/.exec(text)?.[1] ?? "0");
    const message = decodeURIComponent(
      String(r.headers["grpc-message"] ?? /grpc-message:\s*([^\r\n]*)/.exec(text)?.[1] ?? ""),
    );
    // UNKNOWN, INTERNAL, UNAVAILABLE, DATA_LOSS: a server's failure, not the client's.
    return { failed: status !== 0, serverFault: r.status >= 500 || [2, 13, 14, 15].includes(status), message };
  }
  if (c.connectStream && r.status === 200) {
    // A Connect stream's error is in its end-of-stream message (flags 0x02), the last envelope.
    let at = 0;
    let end: { error?: { code?: string; message?: string } } = {};
    while (at + 5 <= r.body.length) {
      const len = r.body.readUInt32BE(at + 1);
      if (r.body[at]! & 2) end = JSON.parse(r.body.subarray(at + 5, at + 5 + len).toString("utf8"));
      at += 5 + len;
    }
    const code = end.error?.code ?? "";
    return {
      failed: code !== "",
      serverFault: ["internal", "unknown", "data_loss", "unavailable"].includes(code),
      message: end.error?.message ?? "",
    };
  }
  let message = "";
  try {
    message = String((JSON.parse(r.body.toString("utf8")) as { message?: unknown }).message ?? "");
  } catch {
    message = r.body.toString("utf8");
  }
  return { failed: r.status >= 400, serverFault: r.status >= 500, message };
}

/** Runs cases a few at a time; returns what went wrong with each, if anything. */
async function runCases(cases: readonly HostileCase[]): Promise<string[]> {
  const problems: string[] = [];
  let next = 0;
  const worker = async () => {
    while (next < cases.length) {
      const c = cases[next++]!;
      const what = `${c.target} — ${c.name}`;
      try {
        const r = await sendCase(c);
        const e = errorOf(c, r);
        if (e.serverFault) problems.push(`${what}: a server failure (${r.status}) ${e.message}`);
        else if (!e.failed) problems.push(`${what}: accepted (${r.status})`);
        else if (c.field && !e.message.includes(c.field))
          problems.push(`${what}: the error does not name ${c.field}: ${e.message}`);
      } catch (err) {
        problems.push(`${what}: ${(err as Error).message}`);
      }
    }
  };
  await Promise.all(Array.from({ length: 6 }, worker));
  return problems;
}

/** Asserts the server still answers its health check (the process is alive and serving). */
async function expectServing(): Promise<void> {
  const r = await fetch(`${s.url}/healthz`, { signal: AbortSignal.timeout(CASE_TIMEOUT_MS) });
  expect(r.status).toBe(200);
}

describe("the hostile table covers the whole contract", () => {
  it("every service of the contract is served", () => {
    const served = new Set(s.app.bindings.map((b) => b.desc.typeName));
    expect(services.map((d) => d.typeName).filter((n) => !served.has(n))).toEqual([]);
  });

  it("every route and every RPC of the contract has cases in the table", () => {
    const targets = new Set(table.cases.map((c) => c.target));
    const routes = table.routes.map(routeKey);
    expect(routes.length).toBeGreaterThan(0);
    expect(routes.filter((r) => !targets.has(r))).toEqual([]);
    const rpcs = services.flatMap((d) => d.methods.map((m) => `connect ${d.typeName}/${m.name}`));
    expect(rpcs.filter((r) => !targets.has(r))).toEqual([]);
  });

  it("every string field of every request declares its rules (aiagent.v1.text), so its bounds are in the table", () => {
    const undeclared: string[] = [];
    const seen = new Set<string>();
    const walk = (m: DescService["methods"][number]["input"]) => {
      if (seen.has(m.typeName)) return;
      seen.add(m.typeName);
      for (const f of m.fields) {
        const str =
          (f.fieldKind === "scalar" || (f.fieldKind === "list" && f.listKind === "scalar")) &&
          f.scalar === ScalarType.STRING;
        if (str && !textRules(f)) undeclared.push(`${m.typeName}.${f.name}`);
        if (f.fieldKind === "message" || (f.fieldKind === "list" && f.listKind === "message")) walk(f.message);
      }
    };
    for (const d of services) for (const m of d.methods) walk(m.input);
    expect(undeclared).toEqual([]);
  });
});

it("the OpenAPI document states the bound every request string field declares", () => {
  type Sch = { maxLength?: number; items?: Sch; properties?: Record<string, Sch> };
  const doc = JSON.parse(
    readFileSync(resolve(import.meta.dirname, "../../gen/openapi/aiagent.v1.openapi.json"), "utf8"),
  ) as {
    paths: Record<string, Record<string, { parameters?: { name: string; schema: Sch }[] }>>;
    components: { schemas: Record<string, Sch> };
  };
  const missing: string[] = [];
  let checked = 0;
  for (const r of table.routes) {
    const op = doc.paths[r.template]?.[r.verb.toLowerCase()];
    const component = doc.components.schemas[r.method.input.typeName];
    for (const f of r.method.input.fields) {
      const max = textRules(f)?.maxLength ?? 0;
      if (max === 0) continue;
      const param = op?.parameters?.find((p) => p.name === f.name)?.schema;
      const prop = component?.properties?.[f.name];
      const stated = [param, param?.items, prop, prop?.items].some((x) => x?.maxLength === max);
      if (param || prop) checked++;
      if ((param || prop) && !stated) missing.push(`${routeKey(r)} ${f.name}`);
    }
  }
  expect(checked).toBeGreaterThan(20);
  expect(missing).toEqual([]);
});

describe("the request that ended the process", () => {
  it("a bad percent-escape in every path parameter of every route: 400 naming it, and the server still answers", async () => {
    const cases = table.cases.filter(
      (c) => c.name.startsWith("path ") && BAD_ESCAPES.some((e) => c.name.endsWith(`: ${e}`)),
    );
    // Every templated route is in it (the five escapes of each of its parameters).
    const templated = table.routes.filter((r) => r.template.includes("{"));
    expect(new Set(cases.map((c) => c.target)).size).toBe(templated.length);
    expect(await runCases(cases)).toEqual([]);
    await expectServing();
  });
});

describe("every hostile case of every route: no 5xx, a 4xx naming the field, nothing written", () => {
  const byTarget = new Map<string, HostileCase[]>();
  for (const c of table.cases) byTarget.set(c.target, [...(byTarget.get(c.target) ?? []), c]);
  it.each([...byTarget.keys()])("%s", async (target) => {
    const before = await snapshot();
    expect(await runCases(byTarget.get(target)!)).toEqual([]);
    expect(await snapshot(), "a refused request changed rows").toEqual(before);
    await expectServing();
  });
});

describe("the routes outside the contract: frame, console, docs, health", () => {
  it("bad escapes, NULs and garbage: no 5xx, and the server still answers", async () => {
    const bot = "7d3c1c1e-1f6b-4b8e-9a41-0d6a3c2f5e10";
    const gets = [
      ...BAD_ESCAPES.flatMap((e) => [
        `/chatbot-iframe/${e}`,
        `/chatbot-iframe/${bot}?launch=${e}`,
        `/chatbot-iframe/${bot}?access_token=${e}`,
        // Issue 46: the frame's language from the host page's locale option.
        `/chatbot-iframe/${bot}?locale=${e}`,
        // Issue 46: the pages the e-mails link to.
        `/mail/open/${e}`,
        `/mail/open/${bot}?launch=${e}`,
        `/mail/unsubscribe/${e}`,
        `/console/preview/${e}`,
        `/v1/chatbot_pictures/${e}`,
        `/console/${e}`,
        `/docs/${e}`,
        `/healthz?${e}=1`,
        `/readyz?x=${e}`,
        `/openapi.json?${e}`,
        `/aiagent.v1.TokenService/GetAccessToken?connect=v1&encoding=json&message=${e}`,
      ]),
      `/chatbot-iframe/${bot}?launch=a%00b`,
      `/chatbot-iframe/${bot}?locale=a%00b`,
      `/chatbot-iframe/${bot}?locale=${"de-".repeat(400)}`,
      `/chatbot-iframe/a%00b`,
      `/mail/open/${bot}?launch=lc_${"a".repeat(5000)}`,
      `/mail/unsubscribe/us_${"a".repeat(190)}`,
    ];
    const cases: HostileCase[] = gets.map((path) => ({
      target: "outside the contract",
      name: `GET ${path}`,
      method: "GET",
      path,
      headers: {},
      presented: "none",
    }));
    const session = (body: string) => ({
      target: "outside the contract",
      name: `POST /console/session ${body.slice(0, 60)}`,
      method: "POST",
      path: "/console/session",
      headers: { "content-type": "application/json", "sec-fetch-site": "same-origin", "x-aiagent-csrf": "1" },
      body,
      presented: "none" as const,
    });
    // Issue 46: the browser's languages, as hostile as a header can be.
    for (const value of ["de;q=abc,,,;;;", `${"x-".repeat(2000)}de`, "*;q=1e999", "\u00e9".repeat(50)])
      cases.push({
        target: "outside the contract",
        name: `GET /chatbot-iframe with Accept-Language ${value.slice(0, 30)}`,
        method: "GET",
        path: `/chatbot-iframe/${bot}`,
        headers: { "accept-language": value },
        presented: "none",
      });
    // Issue 46: the one-click unsubscribe (RFC 8058) is a POST of a form nobody reads, with hostile tokens.
    for (const e of [...BAD_ESCAPES, "us_%00", `us_${"x".repeat(43)}`, "..%2F..%2Fetc"])
      cases.push({
        target: "outside the contract",
        name: `POST /mail/unsubscribe/${e}`,
        method: "POST",
        path: `/mail/unsubscribe/${e}`,
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: "List-Unsubscribe=One-Click",
        presented: "none",
      });
    cases.push(
      session('{"email":"a\\u0000b@example.com","password":"x"}'),
      session('{"email":"a@example.com","password":"a\\u0000b"}'),
      session('{"email":"\\ud800@example.com","password":"x"}'),
      session(`{"email":${JSON.stringify(`${"x".repeat(300)}@example.com`)},"password":"x"}`),
      session("[[[[[[[[[[[[[[[[[[[["),
    );
    const before = await snapshot();
    const problems: string[] = [];
    const statuses: number[] = [];
    await Promise.all(
      cases.map(async (c, i) => {
        try {
          const r = await sendCase(c);
          statuses[i] = r.status;
          if (r.status >= 500) problems.push(`${c.name}: ${r.status} ${r.body.toString("utf8").slice(0, 200)}`);
        } catch (err) {
          problems.push(`${c.name}: ${(err as Error).message}`);
        }
      }),
    );
    expect(problems).toEqual([]);
    // The console's sign-in is an RPC of the contract (ConsoleService.SignIn): its field rules refuse each hostile
    // e-mail, password and body as input before the gate, as get_id_token's do (a NUL is stored by no back end).
    expect(statuses.slice(-5)).toEqual([400, 400, 400, 400, 400]);
    expect(await snapshot(), "a refused request changed rows").toEqual(before);
    await expectServing();
  });
});

/** Writes bytes on a raw connection; resolves with what came back when the server closes it (or the wait ends). */
function rawExchange(bytes: Buffer | string, endWrite: boolean): Promise<{ text: string; closed: boolean }> {
  const u = new URL(s.url);
  return new Promise((resolvePromise, reject) => {
    const sock = netConnect(Number(u.port), u.hostname);
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      sock.destroy();
      resolvePromise({ text: Buffer.concat(chunks).toString("latin1"), closed: false });
    }, CASE_TIMEOUT_MS);
    sock.on("data", (d: Buffer) => chunks.push(d));
    sock.on("error", () => undefined);
    sock.on("close", () => {
      clearTimeout(timer);
      resolvePromise({ text: Buffer.concat(chunks).toString("latin1"), closed: true });
    });
    sock.on("connect", () => {
      if (endWrite) sock.end(bytes);
      else sock.write(bytes);
    });
    sock.once("error", reject);
  });
}

describe("raw connections", () => {
  const target = "/v1/account/chatbots";
  it("Content-Length and Transfer-Encoding together (request smuggling): 400, and the connection closed", async () => {
    const r = await rawExchange(
      `POST ${target} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET /healthz HTTP/1.1\r\nHost: x\r\n\r\n`,
      false,
    );
    expect(r.text).toMatch(/^HTTP\/1\.1 400/);
    // The smuggled second request is not served.
    expect(r.text.match(/HTTP\/1\.1 /g)?.length).toBe(1);
    expect(r.closed).toBe(true);
    await expectServing();
  });

  it("a chunk size that is not hexadecimal: 400, and the connection closed", async () => {
    const r = await rawExchange(
      `POST ${target} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n`,
      false,
    );
    expect(r.text).toMatch(/^HTTP\/1\.1 400/);
    expect(r.closed).toBe(true);
    await expectServing();
  });

  it("a Content-Length longer than the body the client sends before it stops: no 5xx, the connection closed", async () => {
    const r = await rawExchange(
      `POST /ai_agent/get_access_token HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"user_id":"u"}`,
      true,
    );
    expect(r.text).not.toMatch(/^HTTP\/1\.1 5/);
    expect(r.closed).toBe(true);
    await expectServing();
  });

  it("an HTTP/2 preface followed by garbage: the connection closed, the server still serving", async () => {
    const r = await rawExchange(
      Buffer.concat([
        Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"),
        Buffer.from("\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff", "latin1"),
      ]),
      false,
    );
    expect(r.closed).toBe(true);
    await expectServing();
  });

  it("a connection reset before its first byte, and one reset mid-request: the server still serving", async () => {
    const u = new URL(s.url);
    for (const bytes of ["", "POST /ai_agent/get_access_token HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{"]) {
      await new Promise<void>((resolvePromise) => {
        const sock = netConnect(Number(u.port), u.hostname, () => {
          if (bytes) sock.write(bytes);
          setTimeout(() => sock.resetAndDestroy(), 20);
        });
        sock.on("error", () => undefined);
        sock.on("close", () => resolvePromise());
      });
    }
    await expectServing();
  });

  it("20 KiB of headers: 431 on HTTP/1.1 and on HTTP/2", async () => {
    const big = "x".repeat(20 * 1024);
    const h1 = await rawExchange(`GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${big}\r\n\r\n`, false);
    expect(h1.text).toMatch(/^HTTP\/1\.1 431/);
    const session = http2Connect(s.url);
    session.on("error", () => undefined);
    const status = await new Promise<number | string>((resolvePromise) => {
      const req = session.request({ ":path": "/healthz", "x-big": big });
      req.on("response", (h) => resolvePromise(Number(h[":status"])));
      req.on("error", (e) => resolvePromise(e.message));
      req.end();
    });
    session.destroy();
    // Either the server answers 431 or the HTTP/2 layer refuses the header block; never a success or a 5xx.
    if (typeof status === "number") expect(status).toBe(431);
    await expectServing();
  });

  it("gRPC over HTTP/2 with a frame of garbage, to every RPC: invalid_argument (3), never a server's failure", async () => {
    const session = http2Connect(s.url);
    session.on("error", () => undefined);
    const garbage = Buffer.from([0, 0, 0, 0, 7, 0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x01]);
    const statuses = await Promise.all(
      services.flatMap((d) =>
        d.methods.map(
          (m) =>
            new Promise<string>((resolvePromise, reject) => {
              const req = session.request({
                ":method": "POST",
                ":path": `/${d.typeName}/${m.name}`,
                "content-type": "application/grpc",
                te: "trailers",
              });
              let status = "";
              req.on("response", (h) => {
                status = String(h["grpc-status"] ?? "");
              });
              req.on("trailers", (t) => {
                status = String(t["grpc-status"] ?? status);
              });
              req.resume();
              req.on("end", () => resolvePromise(`${m.name} ${status}`));
              req.on("error", reject);
              req.end(garbage);
            }),
        ),
      ),
    );
    session.close();
    expect(statuses.filter((x) => !x.endsWith(" 3"))).toEqual([]);
    await expectServing();
  });

  it("the request that ended the process, over HTTP/2 too: 400 naming the parameter", async () => {
    const session = http2Connect(s.url);
    session.on("error", () => undefined);
    const answers = await Promise.all(
      BAD_ESCAPES.map(
        (e) =>
          new Promise<{ status: number; body: string }>((resolvePromise, reject) => {
            const req = session.request({
              ":path": `/v1/account/chatbots/${e}`,
              authorization: `Bearer ${credential.admin}`,
            });
            let status = 0;
            let body = "";
            req.on("response", (h) => {
              status = Number(h[":status"]);
            });
            req.setEncoding("utf8");
            req.on("data", (d: string) => {
              body += d;
            });
            req.on("end", () => resolvePromise({ status, body }));
            req.on("error", reject);
            req.end();
          }),
      ),
    );
    session.close();
    for (const a of answers) {
      expect(a.status).toBe(400);
      expect(a.body).toContain("chatbot_id");
    }
    await expectServing();
  });
});
