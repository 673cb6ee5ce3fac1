import type { ConversationService } from "../domain/conversation/conversation-service.js";
import { Metrics } from "../observability/metrics.js";
import type { Base } from "./base.js";

/** The Prometheus series (GET /metrics with AIAGENT_METRICS_TOKEN), read from the store and the caches. */
export function composeMetrics(b: Base, conversations: ConversationService): Metrics {
  return new Metrics({
    storeStats: () => b.store.stats(),
    pageCache: () => conversations.pageCacheCounts,
    listCache: () => conversations.listCacheCounts,
    processDefaults: b.config.metricsToken !== undefined,
  });
}
