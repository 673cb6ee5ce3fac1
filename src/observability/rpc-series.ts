import type { Registry } from "prom-client";

/** Upper bounds of the duration histogram's buckets, in seconds. */
const BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

interface Series {
  labels: { rpc: string; protocol: string; code: string };
  count: number;
  sum: number;
  /** Observations per bucket (not cumulative; summed when scraped). */
  buckets: number[];
}

/**
 * The RPC count and duration series, kept as plain numbers and turned into prom-client's text only when scraped:
 * every request records here, and prom-client's own counters hash their label set and check their value on every
 * call (measured at several microseconds per request on the benchmark's machine).
 */
export class RpcSeries {
  private readonly series = new Map<string, Series>();

  constructor(registry: Registry) {
    const all = () => [...this.series.values()];
    const requests = {
      name: "aiagent_rpc_requests_total",
      help: "RPCs answered, by method, protocol and outcome code",
      type: "counter",
      get: async () => ({ ...requests, values: all().map((s) => ({ labels: s.labels, value: s.count })) }),
    };
    const duration = {
      name: "aiagent_rpc_duration_seconds",
      help: "Time from an RPC's start to its answer (a stream: to its end), by method, protocol and outcome code",
      type: "histogram",
      get: async () => ({
        ...duration,
        values: all().flatMap((s) => {
          let cumulative = 0;
          const buckets = BUCKETS.map((le, i) => {
            cumulative += s.buckets[i]!;
            return { metricName: `${duration.name}_bucket`, labels: { ...s.labels, le }, value: cumulative };
          });
          return [
            ...buckets,
            { metricName: `${duration.name}_bucket`, labels: { ...s.labels, le: "+Inf" }, value: s.count },
            { metricName: `${duration.name}_sum`, labels: s.labels, value: s.sum },
            { metricName: `${duration.name}_count`, labels: s.labels, value: s.count },
          ];
        }),
      }),
    };
    // prom-client formats any registered object with a name, a type and get(); these two are read only when scraped.
    registry.registerMetric(requests as never);
    registry.registerMetric(duration as never);
  }

  /** One RPC answered with `code` after `seconds`. */
  record(rpc: string, protocol: string, code: string, seconds: number): void {
    const key = `${rpc} ${protocol} ${code}`;
    let s = this.series.get(key);
    if (!s) {
      s = { labels: { rpc, protocol, code }, count: 0, sum: 0, buckets: BUCKETS.map(() => 0) };
      this.series.set(key, s);
    }
    s.count++;
    s.sum += seconds;
    const i = BUCKETS.findIndex((le) => seconds <= le);
    if (i >= 0) s.buckets[i]!++;
  }
}
