import { createHash, timingSafeEqual } from "node:crypto";
import type { PageRoute } from "../protocol/http/pages.js";
import { sendJson } from "../protocol/http/types.js";
import type { Metrics } from "./metrics.js";

const digest = (s: string) => createHash("sha256").update(s).digest();

/**
 * `GET /metrics` for Prometheus, behind a bearer secret (AIAGENT_METRICS_TOKEN). Without one configured there is
 * no such route (404, like any unknown path): metrics are never public by default.
 */
export function metricsRoute(metrics: Metrics, token: string | undefined): PageRoute[] {
  if (token === undefined) return [];
  const expected = digest(token);
  const serve: PageRoute["serve"] = (req, res) => {
    const auth = req.headers.authorization ?? "";
    const presented = auth.startsWith("Bearer ") ? auth.slice(7) : "";
    // Compared as fixed-length digests, so the time taken says nothing about the secret.
    if (!timingSafeEqual(digest(presented), expected)) {
      sendJson(
        res,
        401,
        { code: "unauthenticated", message: "send Authorization: Bearer <AIAGENT_METRICS_TOKEN>", details: [] },
        { "www-authenticate": 'Bearer realm="metrics"' },
      );
      return;
    }
    return metrics.text().then(
      ({ contentType, body }) => {
        res.writeHead(200, { "content-type": contentType, "cache-control": "no-store" });
        if (req.method === "HEAD") res.end();
        else res.end(body);
      },
      () => sendJson(res, 500, { code: "internal", message: "metrics could not be collected", details: [] }),
    );
  };
  // The scrape secret is the operator's, not an account's: the one page that sees an Authorization header.
  return [{ name: "metrics", verbs: ["GET", "HEAD"], path: "/metrics", operatorSecret: true, serve }];
}
