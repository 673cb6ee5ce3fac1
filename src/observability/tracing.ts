import { type Tracer, trace } from "@opentelemetry/api";

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

let provider: { shutdown(): Promise<void> } | undefined;

/**
 * Starts exporting traces over OTLP/HTTP when the environment asks (once per process): registers the provider,
 * the async-context manager and the W3C `traceparent` propagator. The exporter reads its own OTEL_EXPORTER_OTLP_*
 * variables (endpoint, headers, protocol, timeout); OTEL_SERVICE_NAME defaults to `aiagent`.
 */
export async function startTracing(env: Env = process.env): Promise<{ shutdown(): Promise<void> } | undefined> {
  if (provider) return provider;
  if (!tracingWanted(env)) return undefined;
  // Loaded only when asked for: the SDK and the exporter take about a second to load on a busy machine, which every
  // command and every start without traces would otherwise pay.
  const [{ OTLPTraceExporter }, { BatchSpanProcessor, NodeTracerProvider }] = await Promise.all([
    import("@opentelemetry/exporter-trace-otlp-http"),
    import("@opentelemetry/sdk-trace-node"),
  ]);
  // The resource reads it from the environment; without it every span would say unknown_service.
  process.env.OTEL_SERVICE_NAME ||= "aiagent";
  const p = new NodeTracerProvider({ spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())] });
  p.register();
  provider = p;
  return p;
}

/** The service's tracer while traces are exported; undefined otherwise, so the request path does no tracing work. */
export function activeTracer(): Tracer | undefined {
  return provider ? trace.getTracer("aiagent") : undefined;
}
