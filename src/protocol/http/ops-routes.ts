import type { KeyRing } from "../../domain/token/key-ring.js";
import type { PageRoute } from "./pages.js";
import { sendJson } from "./types.js";

/** /healthz (alive), /readyz (the database answers) and the public signing keys. */
export function opsRoutes(deps: {
  keys: KeyRing;
  ready: () => Promise<boolean>;
  /** E-mail's state, shown beside the status (never a reason to be unready: mail waits in the outbox). */
  mail?: (() => Promise<Record<string, unknown>>) | undefined;
}): PageRoute[] {
  return [
    {
      name: "liveness probe",
      verbs: ["GET", "HEAD"],
      path: "/healthz",
      serve: (_req, res) => sendJson(res, 200, { status: "ok" }),
    },
    {
      name: "readiness probe",
      verbs: ["GET", "HEAD"],
      path: "/readyz",
      serve: (_req, res) =>
        deps
          .ready()
          .catch(() => false)
          .then(async (ok) => {
            const mail = ok && deps.mail ? await deps.mail().catch(() => undefined) : undefined;
            sendJson(
              res,
              ok ? 200 : 503,
              ok
                ? { status: "ready", ...(mail ? { mail } : {}) }
                : { status: "unavailable", reason: "the database does not answer" },
            );
          }),
    },
    {
      name: "public signing keys",
      verbs: ["GET", "HEAD"],
      path: "/.well-known/jwks.json",
      // A rotation made by another process is published within the key ring's refresh interval.
      serve: (_req, res) =>
        deps.keys.fresh().then(() => sendJson(res, 200, deps.keys.jwks(), { "cache-control": "public, max-age=300" })),
    },
  ];
}
