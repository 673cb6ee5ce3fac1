import type { Tracer } from "@opentelemetry/api";
import type { Config } from "../config.js";
import type { Clock } from "../domain/clock.js";
import type { Store, Transact } from "../domain/store.js";
import type { Logger } from "../log.js";

/** What every area's factory may lean on: the storage port, the clock, the log and the tracing around them. */
export interface Base {
  config: Config;
  store: Store;
  clock: Clock;
  log: Logger;
  /** Undefined unless OTEL_* asked for traces (startTracing, in `aiagent serve`): then nothing traces. */
  tracer: Tracer | undefined;
  /** The store's units of work, traced when tracing is on. */
  transaction: Transact;
}

/** A background part's failure, logged as a warning under its name. */
export const warnOn =
  (log: Logger, what: string) =>
  (e: unknown): void =>
    log.warn(what, { error: e instanceof Error ? e.message : String(e) });
