import { randomUUID } from "node:crypto";
import { type DescField, type DescMessage, ScalarType } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import fc from "fast-check";
import { afterAll, expect } from "vitest";
import { type FileServer, serverForFile } from "../helpers/file-server.js";
import { HOSTILE_SERVER } from "./hostile-table.js";
import { type CustomerSession, customerSessionForFile } from "./support.js";

// Hostile values for the fuzzing files (hostile-input.test.ts: the JSON routes; hostile-rpc-json.test.ts and
// hostile-rpc-binary.test.ts: every RPC over Connect), split so that they run in parallel, each against its own
// server. Modest run counts: every run is a real request against a real server and database.
export const RUNS_PER_ROUTE = 40;
export const RUNS_PER_RPC = 25;

/** The file's server (HOSTILE_SERVER) and customer session; after the file, the server must still be up. */
export function hostileServerForFile(): { fx: FileServer; cs: CustomerSession } {
  const fx = serverForFile({ server: HOSTILE_SERVER });
  const cs = customerSessionForFile(fx, "hostile-user");
  afterAll(async () => {
    // Still up after everything.
    expect((await fetch(`${fx.s.url}/healthz`)).status).toBe(200);
  });
  return { fx, cs };
}

/** The arbitraries, given the file's server and session (their real values are read when generated). */
export function hostileArbitraries({ fx, cs }: { fx: FileServer; cs: CustomerSession }) {
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

  const authHeader = fc.oneof(
    fc.constant(undefined),
    fc.constant(null).map(() => `Bearer ${cs.id}`),
    fc.constant(null).map(() => `Bearer ${cs.access}`),
    hostileString().map((x) => `Bearer ${x}`),
    hostileString(),
  );

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
  return { hostileString, hostileValue, authHeader, hostileMessage };
}

export const FAILURES = new Set([
  Code.Internal,
  Code.Unknown,
  Code.DataLoss,
  Code.Unavailable,
  Code.Unimplemented,
  Code.DeadlineExceeded,
]);

/** Header values as HTTP can carry them: what no client library will send is replaced by `?`. */
export function safeHeaders(h: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  // eslint-disable-next-line no-control-regex
  for (const [k, v] of Object.entries(h)) out[k] = v.replace(/[^\t\x20-\x7e]/g, "?").trim();
  return out;
}
