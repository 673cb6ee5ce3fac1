import type { DescMethod, DescService } from "@bufbuild/protobuf";
import { type ConnectRouter, createContextKey, type HandlerContext } from "@connectrpc/connect";
import type { Logger } from "../log.js";
import type { RpcObserver } from "../observability/rpc.js";
import { poolBinaryStrings } from "./binary-strings.js";
import type { AnyHandler, Call } from "./call.js";
import { toConnectError } from "./errors.js";
import type { ServiceBinding } from "./rest/transcoder.js";

/** The client's address, put in every Connect context by the adapter's contextValues. */
export const peerKey = createContextKey<string>("", { description: "client address" });

function callOf(ctx: HandlerContext): Call {
  return {
    // Fetch's Headers throws on a pseudo-header name (":authority"): there is none to read here.
    header: (name) => (name.startsWith(":") ? undefined : (ctx.requestHeader.get(name) ?? undefined)),
    queryAccessToken: undefined,
    peer: ctx.values.get(peerKey),
    signal: ctx.signal,
    setResponseHeader: (name, value) => ctx.responseHeader.set(name, value),
    encoder: undefined,
  };
}

/**
 * Every method carries an account's or a customer's data (or a credential): its answer, error or not, must never be
 * stored by a cache. Set before the handler runs, so errors carry it too (Connect GET forms are cacheable otherwise).
 */
function noStore(ctx: HandlerContext): void {
  ctx.responseHeader.set("cache-control", "no-store");
}

function wrap(
  desc: DescService,
  handlers: Record<string, AnyHandler>,
  log: Logger,
  observer: RpcObserver | undefined,
): Record<string, unknown> {
  const impl: Record<string, unknown> = {};
  for (const m of desc.methods) {
    const h = handlers[m.localName];
    if (!h) continue;
    const stream = async function* (req: never, ctx: HandlerContext) {
      try {
        yield* h(req, callOf(ctx)) as AsyncIterable<unknown>;
      } catch (e) {
        throw toConnectError(e, log);
      }
    };
    const unary = async (req: never, ctx: HandlerContext) => {
      try {
        return await (h(req, callOf(ctx)) as Promise<unknown>);
      } catch (e) {
        throw toConnectError(e, log);
      }
    };
    const header = (ctx: HandlerContext) => (name: string) => ctx.requestHeader.get(name) ?? undefined;
    impl[m.localName] =
      m.methodKind === "server_streaming"
        ? (req: never, ctx: HandlerContext) => {
            noStore(ctx);
            return observer
              ? observer.stream(m, ctx.protocolName, header(ctx), () => stream(req, ctx))
              : stream(req, ctx);
          }
        : (req: never, ctx: HandlerContext) => {
            noStore(ctx);
            return observer
              ? observer.observe(m, ctx.protocolName, header(ctx), () => unary(req, ctx))
              : unary(req, ctx);
          };
  }
  return impl;
}

/** Registers every service for the Connect, gRPC and gRPC-Web protocols, over the same handlers the JSON routes use. */
export function createConnectRoutes(
  bindings: readonly ServiceBinding[],
  log: Logger,
  observer?: RpcObserver,
  largeBodies: ReadonlyMap<DescMethod, number> = new Map(),
): (router: ConnectRouter) => void {
  poolBinaryStrings();
  return (router) => {
    for (const b of bindings) {
      const impl = wrap(b.desc, b.handlers, log, observer);
      router.service(b.desc, impl as never);
      // A method with a larger body limit (an upload) is registered again with it; the later registration serves.
      for (const m of b.desc.methods) {
        const readMaxBytes = largeBodies.get(m);
        if (readMaxBytes !== undefined && impl[m.localName])
          router.rpc(m as never, impl[m.localName] as never, { readMaxBytes });
      }
    }
  };
}
