import { Counter, collectDefaultMetrics, Gauge, Registry } from "prom-client";
import type { StoreStats } from "../domain/store.js";
import { RpcSeries } from "./rpc-series.js";

/** What the page cache has counted so far. */
export interface PageCacheCounts {
  hits: number;
  misses: number;
}

/** What the metrics read when scraped. */
export interface MetricSources {
  storeStats(): Promise<StoreStats>;
  pageCache(): PageCacheCounts;
  /** The contact list cache's counts (the same shape). */
  listCache(): PageCacheCounts;
  /** Process defaults (CPU, memory, event-loop delay, GC): once per process, so off for a second app in a test. */
  processDefaults: boolean;
}

/** A counter that mirrors a running total kept elsewhere, read at each scrape. */
function mirroredCounter(registry: Registry, name: string, help: string, read: () => Promise<number> | number): void {
  let seen = 0;
  new Counter({
    name,
    help,
    registers: [registry],
    async collect() {
      const now = await read();
      // A total never goes down; one that did (a reset elsewhere) starts the series' increase again.
      this.inc(Math.max(0, now - seen));
      seen = Math.max(seen, now);
    },
  });
}

const NO_STATS: StoreStats = { poolInUse: 0, poolWaiting: 0, unitRetries: 0, outboxPending: 0, outboxOldestAt: null };

/**
 * Every series this service exports (docs/operations.md lists them). Each app has its own registry, so tests may
 * build several in one process. Labels are bounded enumerations: method names, protocols, codes, reasons, kinds.
 */
export class Metrics {
  readonly registry = new Registry();
  /** RPCs by method, protocol and code: count and duration. */
  readonly rpc: RpcSeries;
  readonly tokensIssued: Counter<"kind">;
  readonly tokensRefreshed: Counter<never>;
  readonly tokensRefused: Counter<"kind" | "reason">;
  readonly liveStreams: Gauge<"kind">;
  readonly webhookDeliveries: Counter<"result">;

  constructor(sources: MetricSources) {
    const registers = [this.registry];
    this.rpc = new RpcSeries(this.registry);
    this.tokensIssued = new Counter({
      name: "aiagent_tokens_issued_total",
      help: "Tokens issued, by kind (access, id, launch)",
      labelNames: ["kind"],
      registers,
    });
    this.tokensRefreshed = new Counter({
      name: "aiagent_tokens_refreshed_total",
      help: "Refresh tokens exchanged for new tokens",
      registers,
    });
    this.tokensRefused = new Counter({
      name: "aiagent_tokens_refused_total",
      help: "Token requests refused, by kind and reason",
      labelNames: ["kind", "reason"],
      registers,
    });
    this.liveStreams = new Gauge({
      name: "aiagent_live_streams",
      help: "Live (watch) streams open on this instance, by kind",
      labelNames: ["kind"],
      registers,
    });
    this.webhookDeliveries = new Counter({
      name: "aiagent_webhook_deliveries_total",
      help: "Webhook delivery attempts by this instance, by result (delivered, failed)",
      labelNames: ["result"],
      registers,
    });
    // One storage read per scrape, shared by the series below; a failed one reads as zeros and `up` 0, never a
    // failed scrape.
    let pending: Promise<StoreStats | undefined> | undefined;
    const stats = () => {
      pending ??= sources
        .storeStats()
        .catch(() => undefined)
        .finally(() => setTimeout(() => (pending = undefined), 100).unref());
      return pending;
    };
    const storeGauge = (name: string, help: string, read: (s: StoreStats) => number) =>
      new Gauge({
        name,
        help,
        registers,
        async collect() {
          this.set(read((await stats()) ?? NO_STATS));
        },
      });
    storeGauge("aiagent_webhook_outbox_depth", "Webhook deliveries waiting to be made", (s) => s.outboxPending);
    storeGauge("aiagent_webhook_outbox_oldest_age_seconds", "Age of the oldest waiting webhook delivery", (s) =>
      s.outboxOldestAt === null ? 0 : Math.max(0, (Date.now() - s.outboxOldestAt) / 1000),
    );
    storeGauge(
      "aiagent_storage_pool_in_use",
      "Storage connections in use (SQLite: the writer lock)",
      (s) => s.poolInUse,
    );
    storeGauge("aiagent_storage_pool_waiting", "Callers waiting for a storage connection", (s) => s.poolWaiting);
    new Gauge({
      name: "aiagent_storage_stats_up",
      help: "1 when storage answered this scrape's statistics",
      registers,
      async collect() {
        this.set((await stats()) ? 1 : 0);
      },
    });
    mirroredCounter(
      this.registry,
      "aiagent_storage_unit_retries_total",
      "Units of work run again after a serialization conflict",
      async () => ((await stats()) ?? NO_STATS).unitRetries,
    );
    mirroredCounter(
      this.registry,
      "aiagent_page_cache_hits_total",
      "Message pages answered from the page cache",
      () => sources.pageCache().hits,
    );
    mirroredCounter(
      this.registry,
      "aiagent_page_cache_misses_total",
      "Message pages built from storage",
      () => sources.pageCache().misses,
    );
    mirroredCounter(
      this.registry,
      "aiagent_list_cache_hits_total",
      "Contact list pages answered from the list cache",
      () => sources.listCache().hits,
    );
    mirroredCounter(
      this.registry,
      "aiagent_list_cache_misses_total",
      "Contact list pages read from storage",
      () => sources.listCache().misses,
    );
    if (sources.processDefaults) collectDefaultMetrics({ register: this.registry });
  }

  /** The text format Prometheus scrapes. */
  async text(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}
