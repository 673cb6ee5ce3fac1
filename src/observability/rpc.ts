import type { DescMethod } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import {
  type Context,
  context,
  propagation,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from "@opentelemetry/api";
import { DomainError } from "../domain/errors.js";
import { codeName, toConnectError } from "../protocol/errors.js";
import type { Metrics } from "./metrics.js";

/** A request header by lower-case name. */
export type HeaderOf = (name: string) => string | undefined;

/** Lets a run that answers errors itself (the JSON routes) report the one it answered with. */
export interface Outcome {
  fail(e: unknown): void;
}

/** The token RPCs, by what a success counts as. */
const TOKEN_RPCS: Record<string, { kind: string; refresh?: true }> = {
  "aiagent.v1.TokenService.GetAccessToken": { kind: "access" },
  "aiagent.v1.TokenService.RefreshToken": { kind: "refresh", refresh: true },
  "aiagent.v1.TokenService.GetIdToken": { kind: "id" },
  "aiagent.v1.TokenService.ExchangeLaunchCode": { kind: "launch" },
};

const headerGetter = {
  keys: () => [],
  get: (carrier: HeaderOf, key: string) => carrier(key),
};

/**
 * Counts, times and traces every RPC at the one place each protocol calls its handler (the Connect adapter's
 * wrapper and the JSON transcoder). Labels and span attributes name the method, protocol and outcome only: never
 * the caller, an account, a user or a token.
 */
export class RpcObserver {
  constructor(
    private readonly metrics: Metrics,
    private readonly tracer: Tracer | undefined,
  ) {}

  /** Runs one RPC (unary, or a whole stream) and records how it ended: thrown, failed through `Outcome`, or ok. */
  async observe<T>(
    method: DescMethod,
    protocol: string,
    header: HeaderOf,
    run: (o: Outcome) => Promise<T>,
  ): Promise<T> {
    const rec = this.begin(method, protocol, header);
    try {
      const result = await rec.within(() => run(rec));
      rec.end(undefined);
      return result;
    } catch (e) {
      rec.fail(e);
      rec.end(e);
      throw e;
    }
  }

  /** A server stream's messages, observed from its first pull to its end (or the client leaving). */
  async *stream<T>(
    method: DescMethod,
    protocol: string,
    header: HeaderOf,
    open: () => AsyncIterable<T>,
  ): AsyncGenerator<T> {
    const rec = this.begin(method, protocol, header);
    let it: AsyncIterator<T> | undefined;
    let finished = false;
    try {
      it = rec.within(() => open()[Symbol.asyncIterator]());
      for (;;) {
        const r = await rec.within(() => it!.next());
        if (r.done) break;
        yield r.value;
      }
      finished = true;
      rec.end(undefined);
    } catch (e) {
      finished = true;
      rec.fail(e);
      rec.end(e);
      throw e;
    } finally {
      if (!finished) {
        // The consumer stopped pulling (the client went away): the handler's own clean-up still runs.
        rec.fail(Code.Canceled);
        rec.end(undefined);
        await it?.return?.();
      }
    }
  }

  private begin(method: DescMethod, protocol: string, header: HeaderOf) {
    const m = this.metrics;
    const start = process.hrtime.bigint();
    const rpc = `${method.parent.name}/${method.name}`;
    const streaming = method.methodKind === "server_streaming";
    if (streaming) m.liveStreams.inc({ kind: method.name });
    let span: Span | undefined;
    let ctx: Context | undefined;
    if (this.tracer) {
      // A caller's W3C traceparent makes this span its child; without one it starts a trace.
      const parent = propagation.extract(ROOT_CONTEXT, header, headerGetter);
      span = this.tracer.startSpan(
        rpc,
        {
          kind: SpanKind.SERVER,
          attributes: {
            "rpc.system": "connect_rpc",
            "rpc.service": method.parent.typeName,
            "rpc.method": method.name,
            "aiagent.protocol": protocol,
          },
        },
        parent,
      );
      ctx = trace.setSpan(parent, span);
    }
    let code = "ok";
    let error: unknown;
    let ended = false;
    return {
      within: <R>(fn: () => R): R => (ctx ? context.with(ctx, fn) : fn()),
      fail(e: unknown) {
        if (error !== undefined) return;
        error = e;
        code = typeof e === "number" ? codeName(e as Code) : codeName(toConnectError(e).code);
      },
      end(_thrown: unknown) {
        if (ended) return;
        ended = true;
        const labels = { rpc, protocol, code };
        m.requests.inc(labels);
        m.duration.observe(labels, Number(process.hrtime.bigint() - start) / 1e9);
        if (streaming) m.liveStreams.dec({ kind: method.name });
        const token = TOKEN_RPCS[`${method.parent.typeName}.${method.name}`];
        if (token) {
          if (code === "ok") {
            if (token.refresh) m.tokensRefreshed.inc();
            else m.tokensIssued.inc({ kind: token.kind });
          } else m.tokensRefused.inc({ kind: token.kind, reason: reasonOf(error, code) });
        }
        if (span) {
          span.setAttribute("rpc.connect_rpc.error_code", code);
          if (code !== "ok") span.setStatus({ code: SpanStatusCode.ERROR, message: code });
          span.end();
        }
      },
    };
  }
}

/** Why a token request was refused, as a bounded name: the domain's reason, else the code. */
function reasonOf(e: unknown, code: string): string {
  return e instanceof DomainError && e.extra.reason ? e.extra.reason : code;
}
