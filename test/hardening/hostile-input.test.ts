import { randomUUID } from "node:crypto";
import { type DescField, type DescMessage, type DescMethod, ScalarType } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type HttpRoute, httpRoutes } from "../../src/protocol/rest/http-rules.js";
import { serverForFile } from "../helpers/file-server.js";
import { sqliteDb } from "../helpers/sqlite.js";
import { scaled } from "../helpers/time-scale.js";
import { HOSTILE_SERVER } from "./hostile-table.js";
import { customerSessionForFile, dbChecksum } from "./support.js";

// Modest run counts: every run is a real request against a real server and database.
const RUNS_PER_ROUTE = 40;
const RUNS_PER_RPC = 25;

const fx = serverForFile({ server: HOSTILE_SERVER });
const cs = customerSessionForFile(fx, "hostile-user");

afterAll(async () => {
  // Still up after everything.
  expect((await fetch(`${fx.s.url}/healthz`)).status).toBe(200);
});

/** Strings an attacker would try, and the real values (so that hostile input also gets past the first checks). */
const hostileString = (): fc.Arbitrary<string> =>
  fc.oneof(
    fc.string({ maxLength: 40 }),
    fc.string({ unit: "grapheme", maxLength: 30 }),
    fc.string({ unit: "binary", maxLength: 30 }),
    fc.constantFrom(
      "",
      " ",
      "\u0000",
      "a\u0000b",
      "\r\n\r\nX-Injected: 1",
      "../../../../etc/passwd",
      "' OR '1'='1' --",
      "%00",
      "%",
      "\ud800",
      "\u202e\u2066",
      "<script>alert(1)</script>",
      "1e400",
      "-1",
      "null",
      "NaN",
      "💥".repeat(200),
      "x".repeat(300),
      "y".repeat(9000),
      "00000000-0000-0000-0000-000000000000",
      "FFFFFFFF-FFFF-4FFF-BFFF-FFFFFFFFFFFF",
    ),
    fc.constantFrom(randomUUID(), `cak_${"A".repeat(43)}`, `rt_${"B".repeat(43)}`, "eyJhbGciOiJub25lIn0.e30."),
    // Real values, read when generated (they exist only once the server is up).
    fc
      .nat(7)
      .map(
        (i) =>
          [fx.a.chatbotId, cs.conversationId, fx.a.email, fx.a.apiKey, cs.refresh, cs.access, cs.id, "hostile-user"][
            i
          ]!,
      ),
  );

const hugeNumber = fc.constantFrom(
  1e308,
  -1e308,
  2 ** 53 + 2,
  -(2 ** 63),
  2 ** 64,
  0.5,
  -0,
  2147483648,
  -2147483649,
  1e-320,
);

/** Any JSON value, with nesting as deep as `depth`. */
function nested(depth: number, leaf: unknown): unknown {
  let v = leaf;
  for (let i = 0; i < depth; i++) v = i % 2 ? [v] : { a: v };
  return v;
}

const hostileValue: fc.Arbitrary<unknown> = fc.letrec<{ v: unknown }>((tie) => ({
  v: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    hostileString(),
    fc.integer(),
    hugeNumber,
    fc.double(),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie("v"), { maxLength: 3 }),
    fc.dictionary(fc.string({ maxLength: 8 }), tie("v"), { maxKeys: 3 }),
    fc.integer({ min: 10, max: 3000 }).map((d) => nested(d, "deep")),
  ),
})).v;

const ROUTES: HttpRoute[] = [];
beforeAll(() => {
  ROUTES.push(...httpRoutes(fx.s.app.bindings.map((b) => b.desc)));
});

/** The names a field may be given by: its proto name, its JSON name, and nonsense. */
function fieldNames(desc: DescMessage): fc.Arbitrary<string> {
  const names = desc.fields.flatMap((f) => [f.name, f.jsonName]);
  return fc.oneof(
    { weight: 5, arbitrary: fc.constantFrom(...names, "access_token") },
    { weight: 1, arbitrary: fc.string({ maxLength: 12 }) },
  );
}

interface HostileRequest {
  query: [string, string][];
  /** Query fragments sent as they are, not percent-encoded. */
  raw: string[];
  body: string | undefined;
  headers: Record<string, string>;
}

const authHeader = fc.oneof(
  fc.constant(undefined),
  fc.constant(null).map(() => `Bearer ${cs.id}`),
  fc.constant(null).map(() => `Bearer ${cs.access}`),
  hostileString().map((x) => `Bearer ${x}`),
  hostileString(),
);

function hostileRequest(route: HttpRoute): fc.Arbitrary<HostileRequest> {
  const desc = route.method.input;
  const query = fc.array(fc.tuple(fieldNames(desc), hostileString()), { maxLength: 5 });
  const bodyObject = fc.dictionary(fieldNames(desc), hostileValue, { maxKeys: 5 }).map((o) => JSON.stringify(o));
  const body =
    route.body === "*"
      ? fc.oneof(
          { weight: 6, arbitrary: bodyObject },
          { weight: 1, arbitrary: fc.string({ maxLength: 100 }) },
          { weight: 1, arbitrary: fc.jsonValue().map((v) => JSON.stringify(v)) },
          { weight: 1, arbitrary: fc.constant(undefined) },
        )
      : fc.oneof(fc.constant(undefined), bodyObject);
  const contentType = fc.oneof(
    { weight: 6, arbitrary: fc.constant("application/json") },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        "text/plain",
        "application/json; charset=latin1",
        "application/x-www-form-urlencoded",
        "application/proto",
        "",
      ),
    },
  );
  return fc.record({
    // Sometimes the frame's token in the query, so frame routes get past authentication.
    query: fc
      .tuple(query, fc.boolean())
      .map(([q, withToken]) => (withToken ? [...q, ["access_token", cs.access] as [string, string]] : q)),
    raw: fc.array(
      fc.constantFrom("%", "%zz", "%00", "%ED%A0%80", "limit=%FF", "&&", "=x", "a[]=1", "__proto__=1", "constructor=x"),
      { maxLength: 2 },
    ),
    body,
    headers: fc.record({ contentType, auth: authHeader }).map(({ contentType: ct, auth }) => {
      const h: Record<string, string> = {};
      if (ct) h["content-type"] = ct;
      if (auth) h.authorization = auth;
      return h;
    }),
  });
}

async function sendHostile(route: HttpRoute, r: HostileRequest): Promise<number> {
  // A lone surrogate cannot be percent-encoded; it goes out as the bytes of one (invalid UTF-8), as an attacker would send it.
  const enc = (x: string) =>
    encodeURIComponent(x.replace(/\p{Cs}/gu, "\u{10FFFF}")).replace(/%F4%8F%BF%BF/g, "%ED%A0%80");
  const qs = [...r.query.map(([k, v]) => `${enc(k)}=${enc(v)}`), ...r.raw].join("&");
  const headers = safeHeaders(r.headers);
  const res = await fetch(`${fx.s.url}${route.template}${qs ? `?${qs}` : ""}`, {
    method: route.verb,
    headers,
    body: route.verb === "GET" ? undefined : r.body,
  });
  await res.arrayBuffer();
  return res.status;
}

describe("hostile input on every JSON route", () => {
  it("covers every route the contract declares", () => {
    expect(ROUTES.length).toBeGreaterThanOrEqual(13);
  });

  it(
    "no 5xx, and a refused request changes nothing",
    async () => {
      for (const route of ROUTES) {
        await fc.assert(
          fc.asyncProperty(hostileRequest(route), async (req) => {
            const before = dbChecksum(sqliteDb(fx.s.app));
            const status = await sendHostile(route, req);
            expect(status, `${route.verb} ${route.template}`).toBeLessThan(500);
            expect(status).toBeGreaterThanOrEqual(200);
            if (status >= 400)
              expect(
                dbChecksum(sqliteDb(fx.s.app)),
                `${route.verb} ${route.template} answered ${status} but wrote`,
              ).toBe(before);
          }),
          { numRuns: RUNS_PER_ROUTE },
        );
      }
      // Its time grows with the contract: RUNS_PER_ROUTE requests for each of the (40-odd) routes.
    },
    scaled(180_000),
  );
});

/** A message of `desc` with hostile values in its fields (typed, so a generated client can send it). */
function hostileMessage(desc: DescMessage, depth = 0): fc.Arbitrary<Record<string, unknown>> {
  const parts: Record<string, fc.Arbitrary<unknown>> = {};
  for (const f of desc.fields) {
    if (f.oneof) continue;
    const v = fieldValue(f, depth);
    if (v) parts[f.localName] = v;
  }
  for (const o of desc.oneofs) {
    parts[o.localName] = fc.oneof(
      fc.constant({ case: undefined }),
      ...o.fields.map((f) => fieldValue(f, depth)!.map((value) => ({ case: f.localName, value }))),
    );
  }
  return fc.record(parts, { requiredKeys: [] });
}

function fieldValue(f: DescField, depth: number): fc.Arbitrary<unknown> | undefined {
  if (f.fieldKind === "message") return depth < 3 ? hostileMessage(f.message, depth + 1) : undefined;
  if (f.fieldKind === "list" && f.listKind === "message")
    return depth < 3 ? fc.array(hostileMessage(f.message, depth + 1), { maxLength: 2 }) : undefined;
  if (f.fieldKind !== "scalar") return undefined;
  switch (f.scalar) {
    case ScalarType.STRING:
      return hostileString().map((x) => x.replace(/[\ud800-\udfff]/g, "\ufffd"));
    case ScalarType.INT32:
      return fc.oneof(
        fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }),
        fc.constantFrom(0, -1, 101, 2 ** 31 - 1, -(2 ** 31)),
      );
    case ScalarType.INT64:
      return fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n });
    case ScalarType.BOOL:
      return fc.boolean();
    default:
      return undefined;
  }
}

const FAILURES = new Set([
  Code.Internal,
  Code.Unknown,
  Code.DataLoss,
  Code.Unavailable,
  Code.Unimplemented,
  Code.DeadlineExceeded,
]);

describe.each([
  ["Connect JSON", false],
  ["Connect binary", true],
])("hostile messages on every RPC over %s", (_name, binary) => {
  it(
    "no server-side failure code, and a refused call changes nothing",
    async () => {
      const transport = createConnectTransport({ baseUrl: fx.s.url, httpVersion: "1.1", useBinaryFormat: binary });
      const tried: string[] = [];
      for (const b of fx.s.app.bindings) {
        const client = createClient(b.desc, transport) as unknown as Record<
          string,
          (req: unknown, opts: unknown) => unknown
        >;
        for (const method of b.desc.methods as DescMethod[]) {
          tried.push(method.name);
          await fc.assert(
            fc.asyncProperty(hostileMessage(method.input), authHeader, async (msg, auth) => {
              const before = dbChecksum(sqliteDb(fx.s.app));
              // A call that hangs fails here as Canceled, naming the RPC, instead of timing the whole test out.
              const signal = AbortSignal.timeout(10_000);
              const opts = auth ? { headers: safeHeaders({ authorization: auth }), signal } : { signal };
              let code: Code | undefined;
              try {
                const out = client[method.localName]!(msg, opts);
                // A watch stream that was let in never ends by itself: its first answer shows it was not a failure.
                if (method.methodKind === "server_streaming")
                  for await (const _ of out as AsyncIterable<unknown>) break;
                else await out;
              } catch (e) {
                code = ConnectError.from(e).code;
              }
              expect(
                code === undefined || !FAILURES.has(code),
                `${method.name}: ${code === undefined ? "" : Code[code]}`,
              ).toBe(true);
              if (code !== undefined)
                expect(dbChecksum(sqliteDb(fx.s.app)), `${method.name} failed with ${Code[code]} but wrote`).toBe(
                  before,
                );
            }),
            { numRuns: RUNS_PER_RPC },
          );
        }
      }
      // Every RPC of both services was tried (the loops above would pass over nothing just as well).
      expect(tried.length).toBe(fx.s.app.bindings.reduce((n, b) => n + b.desc.methods.length, 0));
      expect(tried.length).toBeGreaterThanOrEqual(13);
    },
    scaled(180_000),
  );
});

/** Header values as HTTP can carry them: what no client library will send is replaced by `?`. */
function safeHeaders(h: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  // eslint-disable-next-line no-control-regex
  for (const [k, v] of Object.entries(h)) out[k] = v.replace(/[^\t\x20-\x7e]/g, "?").trim();
  return out;
}

describe("raw garbage at the RPC paths", () => {
  it("random bytes as protobuf and random text as JSON: a 4xx, nothing written", async () => {
    const paths = fx.s.app.bindings.flatMap((b) => b.desc.methods.map((m) => `/${b.desc.typeName}/${m.name}`));
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...paths),
        fc.constantFrom(
          "application/proto",
          "application/json",
          "application/connect+proto",
          "application/connect+json",
          "application/grpc-web+proto",
          "text/plain",
        ),
        fc.oneof(
          fc.uint8Array({ maxLength: 300 }),
          fc.string({ maxLength: 200 }).map((x) => new TextEncoder().encode(x)),
          fc.jsonValue().map((v) => new TextEncoder().encode(JSON.stringify(v))),
        ),
        async (path, contentType, body) => {
          const before = dbChecksum(sqliteDb(fx.s.app));
          const r = await fetch(fx.s.url + path, {
            method: "POST",
            headers: { "content-type": contentType, "connect-protocol-version": "1" },
            body,
          });
          await r.arrayBuffer();
          expect(r.status).toBeLessThan(500);
          if (r.status >= 400 || contentType.startsWith("application/grpc"))
            expect(dbChecksum(sqliteDb(fx.s.app))).toBe(before);
        },
      ),
      { numRuns: 150 },
    );
  });
});
