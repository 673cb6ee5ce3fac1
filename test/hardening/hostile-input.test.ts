import type { DescMessage } from "@bufbuild/protobuf";
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { type HttpRoute, httpRoutes } from "../../src/protocol/rest/http-rules.js";
import { sqliteDb } from "../helpers/sqlite.js";
import { scaled } from "../helpers/time-scale.js";
import { hostileArbitraries, hostileServerForFile, RUNS_PER_ROUTE, safeHeaders } from "./hostile-values.js";
import { dbChecksum } from "./support.js";

// The JSON routes and raw garbage at the RPC paths; the RPCs' typed messages are in hostile-rpc-json.test.ts and
// hostile-rpc-binary.test.ts, which run beside this file (see hostile-values.ts).
const { fx, cs } = hostileServerForFile();
const { hostileString, hostileValue, authHeader } = hostileArbitraries({ fx, cs });

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
