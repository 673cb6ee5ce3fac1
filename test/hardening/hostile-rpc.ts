import type { DescMethod } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { sqliteDb } from "../helpers/sqlite.js";
import { scaled } from "../helpers/time-scale.js";
import { FAILURES, hostileArbitraries, hostileServerForFile, RUNS_PER_RPC, safeHeaders } from "./hostile-values.js";
import { dbChecksum } from "./support.js";

/** Hostile messages on every RPC over Connect, JSON or binary (one file each, so the two run in parallel). */
export function hostileRpcSuite(name: string, binary: boolean): void {
  const { fx, cs } = hostileServerForFile();
  const { hostileMessage, authHeader } = hostileArbitraries({ fx, cs });
  describe(`hostile messages on every RPC over ${name}`, () => {
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
}
