import { context, trace } from "@opentelemetry/api";

/** A structured logger writing one JSON object per line, with every secret redacted. */
export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

const LEVELS = { debug: 10, info: 20, warn: 30, error: 40, silent: 99 } as const;
const SECRET_KEY = /token|secret|password|api_?key|authorization|cookie|launch_?code/i;
// Whatever looks like one of our credentials is masked even inside free text (URLs, messages). `message` is the
// whole request of a Connect GET (?message=<base64 protobuf>), which may hold an access token in encoded form.
const SECRET_VALUE =
  /\b(cak_|rt_|inv_|lc_)[A-Za-z0-9_-]{8,}|eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*|([?&](access_token|refresh_token|client_api_key|password|message|launch|launch_code)=)[^&\s"]*/g;

/** Masks secrets in a string: our key and token shapes, and secret-named query parameters. */
export function redactText(s: string): string {
  // The second group is the parameter with its `?`/`&` and `=`, kept so the URL stays readable.
  return s.replace(SECRET_VALUE, (_m, _prefix, param: string | undefined) =>
    param ? `${param}[REDACTED]` : "[REDACTED]",
  );
}

/** Deep copy of a log record with secret-named fields and secret-shaped values masked. */
export function redact(value: unknown, depth = 0): unknown {
  if (typeof value === "string") return redactText(value);
  if (depth > 6 || value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) return value.map((v) => redact(v, depth + 1));
  if (value instanceof Error) return { name: value.name, message: redactText(value.message) };
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = SECRET_KEY.test(k) ? "[REDACTED]" : redact(v, depth + 1);
  return out;
}

/** A logger at the given level writing to `write` (stdout by default). */
export function createLogger(
  level: keyof typeof LEVELS,
  write: (line: string) => void = (l) => process.stdout.write(l),
): Logger {
  const min = LEVELS[level];
  const emit = (lvl: keyof typeof LEVELS, msg: string, fields?: Record<string, unknown>) => {
    if (LEVELS[lvl] < min) return;
    // With traces on, a line written while a request runs carries its trace (and span) id; off, there is no span.
    const span = trace.getSpan(context.active())?.spanContext();
    const rec = {
      time: new Date().toISOString(),
      level: lvl,
      msg: redactText(msg),
      ...(span ? { trace_id: span.traceId, span_id: span.spanId } : {}),
      ...(fields ? (redact(fields) as object) : {}),
    };
    write(`${JSON.stringify(rec)}\n`);
  };
  return {
    debug: (m, f) => emit("debug", m, f),
    info: (m, f) => emit("info", m, f),
    warn: (m, f) => emit("warn", m, f),
    error: (m, f) => emit("error", m, f),
  };
}
