import type pg from "pg";

/**
 * Runs fn while holding the session advisory lock of `name` on one pooled connection, or answers undefined at once
 * when another session holds it: of several instances, one runs a scheduled job at a time. The lock goes with the
 * connection if the process dies.
 */
export async function withAdvisoryLock<T>(pool: pg.Pool, name: string, fn: () => Promise<T>): Promise<T | undefined> {
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    const key = `aiagent:${name}`;
    const got = await client.query<{ ok: boolean }>("SELECT pg_try_advisory_lock(hashtext($1)) AS ok", [key]);
    if (!got.rows[0]?.ok) return undefined;
    try {
      return await fn();
    } finally {
      await client.query("SELECT pg_advisory_unlock(hashtext($1))", [key]).catch((e: Error) => {
        broken = e;
      });
    }
  } finally {
    // A connection whose unlock failed may still hold the lock: it is closed, not returned to the pool.
    client.release(broken);
  }
}
