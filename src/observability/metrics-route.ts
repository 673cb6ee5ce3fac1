import { createHash, timingSafeEqual } from "node:crypto";
import { pathOf, type Route, sendJson } from "../protocol/http/types.js";
import type { Metrics } from "./metrics.js";

const digest = (s: string) => createHash("sha256").update(s).digest();

/**
 * `GET /metrics` for Prometheus, behind a bearer secret (AIAGENT_METRICS_TOKEN). Without one configured there is
 * no such route (404, like any unknown path): metrics are never public by default.
 */
export function metricsRoute(metrics: Metrics, token: string | undefined): Route {
  const expected = token === undefined ? undefined : digest(token);
  return (req, res) => {
    if (expected === undefined || pathOf(req) !== "/metrics") return false;
    if (req.method !== "GET" && req.method !== "HEAD") {
      sendJson(
        res,
        405,
        { code: "unimplemented", message: `${req.method} is not allowed on /metrics; use GET`, details: [] },
        { allow: "GET, HEAD" },
      );
      return true;
    }
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
      return true;
    }
    void metrics.text().then(
      ({ contentType, body }) => {
        res.writeHead(200, { "content-type": contentType, "cache-control": "no-store" });
        if (req.method === "HEAD") res.end();
        else res.end(body);
      },
      () => sendJson(res, 500, { code: "internal", message: "metrics could not be collected", details: [] }),
    );
    return true;
  };
}
