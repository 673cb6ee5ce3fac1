import type { KeyRing } from "../../domain/token/key-ring.js";
import { pathOf, type Route, sendJson } from "./types.js";

/** /healthz (alive), /readyz (the database answers) and the public signing keys. */
export function opsRoutes(deps: { keys: KeyRing; ready: () => Promise<boolean> }): Route {
  return (req, res) => {
    if (req.method !== "GET" && req.method !== "HEAD") return false;
    switch (pathOf(req)) {
      case "/healthz":
        sendJson(res, 200, { status: "ok" });
        return true;
      case "/readyz":
        void deps
          .ready()
          .catch(() => false)
          .then((ok) => sendJson(res, ok ? 200 : 503, { status: ok ? "ready" : "unavailable" }));
        return true;
      case "/.well-known/jwks.json":
        // A rotation made by another process is published within the key ring's refresh interval.
        void deps.keys
          .fresh()
          .then(() => sendJson(res, 200, deps.keys.jwks(), { "cache-control": "public, max-age=300" }));
        return true;
      default:
        return false;
    }
  };
}
