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

/** What is recorded of a method, worked out once per method rather than per request. */
interface MethodInfo {
  rpc: string;
  kind: string;
  streaming: boolean;
  token: { kind: string; refresh?: true } | undefined;
  attributes: Record<string, string>;
}

/** One RPC being observed: its start, its span (with traces on) and how it ended. */
class Recording implements Outcome {
  private readonly start = performance.now();
  private code = "ok";
  private error: unknown;
  private ended = false;

  constructor(
    private readonly metrics: Metrics,
    private readonly info: MethodInfo,
    private readonly protocol: string,
    private readonly span: Span | undefined,
    private readonly ctx: Context | undefined,
  ) {
    if (info.streaming) metrics.liveStreams.inc({ kind: info.kind });
  }

  within<R>(fn: () => R): R {
    return this.ctx ? context.with(this.ctx, fn) : fn();
  }

  fail(e: unknown): void {
    if (this.error !== undefined) return;
    this.error = e;
    this.code = typeof e === "number" ? codeName(e as Code) : codeName(toConnectError(e).code);
  }

  end(): void {
    if (this.ended) return;
    this.ended = true;
    const { metrics: m, info, code } = this;
    m.rpc.record(info.rpc, this.protocol, code, (performance.now() - this.start) / 1000);
    if (info.streaming) m.liveStreams.dec({ kind: info.kind });
    const token = info.token;
    if (token) {
      if (code === "ok") {
        if (token.refresh) m.tokensRefreshed.inc();
        else m.tokensIssued.inc({ kind: token.kind });
      } else m.tokensRefused.inc({ kind: token.kind, reason: reasonOf(this.error, code) });
    }
    if (this.span) {
      this.span.setAttribute("rpc.connect_rpc.error_code", code);
      if (code !== "ok") this.span.setStatus({ code: SpanStatusCode.ERROR, message: code });
      this.span.end();
    }
  }
}

/**
 * Counts, times and traces every RPC at the one place each protocol calls its handler (the Connect adapter's
 * wrapper and the JSON transcoder). Labels and span attributes name the method, protocol and outcome only: never
 * the caller, an account, a user or a token.
 */
export class RpcObserver {
  private readonly methods = new WeakMap<DescMethod, MethodInfo>();

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
      return await rec.within(() => run(rec));
    } catch (e) {
      rec.fail(e);
      throw e;
    } finally {
      rec.end();
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
    } catch (e) {
      finished = true;
      rec.fail(e);
      throw e;
    } finally {
      if (!finished) {
        // The consumer stopped pulling (the client went away): the handler's own clean-up still runs.
        rec.fail(Code.Canceled);
        await it?.return?.();
      }
      rec.end();
    }
  }

  private infoOf(method: DescMethod): MethodInfo {
    let info = this.methods.get(method);
    if (!info) {
      info = {
        rpc: `${method.parent.name}/${method.name}`,
        kind: method.name,
        streaming: method.methodKind === "server_streaming",
        token: TOKEN_RPCS[`${method.parent.typeName}.${method.name}`],
        attributes: { "rpc.system": "connect_rpc", "rpc.service": method.parent.typeName, "rpc.method": method.name },
      };
      this.methods.set(method, info);
    }
    return info;
  }

  private begin(method: DescMethod, protocol: string, header: HeaderOf): Recording {
    const info = this.infoOf(method);
    if (!this.tracer) return new Recording(this.metrics, info, protocol, undefined, undefined);
    // A caller's W3C traceparent makes this span its child; without one it starts a trace.
    const parent = propagation.extract(ROOT_CONTEXT, header, headerGetter);
    const span = this.tracer.startSpan(
      info.rpc,
      { kind: SpanKind.SERVER, attributes: { ...info.attributes, "aiagent.protocol": protocol } },
      parent,
    );
    return new Recording(this.metrics, info, protocol, span, trace.setSpan(parent, span));
  }
}

/** Why a token request was refused, as a bounded name: the domain's reason, else the code. */
function reasonOf(e: unknown, code: string): string {
  return e instanceof DomainError && e.extra.reason ? e.extra.reason : code;
}
