import { type Tracer, trace } from "@opentelemetry/api";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { BatchSpanProcessor, NodeTracerProvider } from "@opentelemetry/sdk-trace-node";

type Env = NodeJS.ProcessEnv;

/**
 * Whether the standard OpenTelemetry variables ask for traces: OTEL_TRACES_EXPORTER naming `otlp`, or (with it
 * unset) an OTLP endpoint. OTEL_SDK_DISABLED=true and OTEL_TRACES_EXPORTER=none turn them off. Off by default.
 */
export function tracingWanted(env: Env = process.env): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === "true") return false;
  const exporters = env.OTEL_TRACES_EXPORTER?.trim();
  if (exporters) return exporters.split(",").some((x) => x.trim() === "otlp");
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
}

let provider: NodeTracerProvider | undefined;

/**
 * Starts exporting traces over OTLP/HTTP when the environment asks (once per process): registers the provider,
 * the async-context manager and the W3C `traceparent` propagator. The exporter reads its own OTEL_EXPORTER_OTLP_*
 * variables (endpoint, headers, protocol, timeout); OTEL_SERVICE_NAME defaults to `aiagent`.
 */
export function startTracing(env: Env = process.env): { shutdown(): Promise<void> } | undefined {
  if (provider) return provider;
  if (!tracingWanted(env)) return undefined;
  // The resource reads it from the environment; without it every span would say unknown_service.
  process.env.OTEL_SERVICE_NAME ||= "aiagent";
  provider = new NodeTracerProvider({ spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())] });
  provider.register();
  return provider;
}

/** The service's tracer while traces are exported; undefined otherwise, so the request path does no tracing work. */
export function activeTracer(): Tracer | undefined {
  return provider ? trace.getTracer("aiagent") : undefined;
}
