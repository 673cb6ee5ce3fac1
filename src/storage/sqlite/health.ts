import type { Db } from "./database.js";

/** A readiness probe: true while the database answers a trivial query. */
export function readinessProbe(db: Db): () => boolean {
  const ping = db.prepare("SELECT 1 AS ok");
  return () => (ping.get() as { ok: number } | undefined)?.ok === 1;
}
