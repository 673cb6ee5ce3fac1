import { context, propagation, type Span, SpanKind, SpanStatusCode, type Tracer, trace } from "@opentelemetry/api";
import type { Post } from "../agents/guarded-post.js";
import type { Agent } from "../domain/agent/agent.js";
import type { Transact } from "../domain/store.js";
import type { Send } from "../domain/webhook/dispatcher.js";
import type { Metrics } from "./metrics.js";

function failed(span: Span, e: unknown): void {
  // The error's kind only: messages may quote what a customer wrote.
  span.setStatus({ code: SpanStatusCode.ERROR, message: e instanceof Error ? e.name : "error" });
}

/** Runs fn in a child span of the active one (a root span when none is active). */
async function inSpan<T>(tracer: Tracer, name: string, kind: SpanKind, fn: (span: Span) => Promise<T>): Promise<T> {
  const span = tracer.startSpan(name, { kind });
  try {
    return await context.with(trace.setSpan(context.active(), span), () => fn(span));
  } catch (e) {
    failed(span, e);
    throw e;
  } finally {
    span.end();
  }
}

/** Each unit of work as a child span of the request's (the storage work a request waits for). */
export function tracedTransaction(transact: Transact, tracer: Tracer | undefined): Transact {
  if (!tracer) return transact;
  return (fn, o) =>
    inSpan(tracer, "storage.unit_of_work", SpanKind.INTERNAL, (span) => {
      span.setAttribute("aiagent.row_locks", o?.rowLocks === true);
      return transact(fn, o);
    });
}

/** Each reply of the agent as a client span, from the call to its last piece of text. */
export function tracedAgent(agent: Agent, tracer: Tracer | undefined): Agent {
  if (!tracer) return agent;
  return {
    // The reads ahead of a reply go into the message's unit of work, as without tracing.
    ...(agent.prepare ? { prepare: agent.prepare.bind(agent) } : {}),
    async *reply(chatbot, history, signal, scope, agentContext) {
      const span = tracer.startSpan("agent.reply", { kind: SpanKind.CLIENT });
      const ctx = trace.setSpan(context.active(), span);
      try {
        const it = context.with(ctx, () =>
          agent.reply(chatbot, history, signal, scope, agentContext)[Symbol.asyncIterator](),
        );
        try {
          for (;;) {
            const r = await context.with(ctx, () => it.next());
            if (r.done) return;
            yield r.value;
          }
        } finally {
          await it.return?.();
        }
      } catch (e) {
        failed(span, e);
        throw e;
      } finally {
        span.end();
      }
    },
  };
}

/**
 * Calls to a model endpoint carry the active trace as a W3C `traceparent` (the `agent.reply` span is their parent), so
 * an endpoint that traces joins the request's trace. Nothing is added with traces off.
 */
export function propagatingPost(post: Post, tracer: Tracer | undefined): Post {
  if (!tracer) return post;
  return (url, headers, body, signal) => {
    const carried = { ...headers };
    propagation.inject(context.active(), carried);
    return post(url, carried, body, signal);
  };
}

/** Webhook deliveries counted by result and, with traces on, each POST as a client span. */
export function observedSend(send: Send, metrics: Metrics, tracer: Tracer | undefined): Send {
  const count = (status: number) =>
    metrics.webhookDeliveries.inc({ result: status >= 200 && status < 300 ? "delivered" : "failed" });
  if (!tracer)
    return async (url, headers, body, signal) => {
      const result = await send(url, headers, body, signal).catch((e: unknown) => {
        count(0);
        throw e;
      });
      count(result.status);
      return result;
    };
  return (url, headers, body, signal) =>
    inSpan(tracer, "webhook.deliver", SpanKind.CLIENT, async (span) => {
      // The endpoint's host only: its path and query may carry the receiver's own secret.
      span.setAttribute("server.address", new URL(url).hostname);
      const result = await send(url, headers, body, signal).catch((e: unknown) => {
        count(0);
        throw e;
      });
      count(result.status);
      span.setAttribute("http.response.status_code", result.status);
      if (result.status < 200 || result.status >= 300) span.setStatus({ code: SpanStatusCode.ERROR });
      return result;
    });
}
