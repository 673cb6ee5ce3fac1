import { execFileSync } from "node:child_process";
import { readdirSync } from "node:fs";
import pg from "pg";

// The `--pinned` rows: PostgreSQL on one core, the service and its load generator on another (taskset), so that
// what the PostgreSQL back end costs the service's core can be told from what PostgreSQL's own work costs.

/** Whether `taskset` (util-linux) runs here. */
export function canPin(): boolean {
  try {
    execFileSync("taskset", ["-p", String(process.pid)], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

/** The threads of a process (taskset -a sets them all; a thread made later inherits its creator's). */
function threads(pid: number): number[] {
  try {
    return readdirSync(`/proc/${pid}/task`).map(Number);
  } catch {
    return [];
  }
}

/** A thread's CPU list as taskset prints it ("0-1"). */
function affinity(tid: number): string | undefined {
  try {
    return execFileSync("taskset", ["-c", "-p", String(tid)], { encoding: "utf8" })
      .split(":")
      .pop()!
      .trim();
  } catch {
    return undefined;
  }
}

/** What puts pinned threads back, run at exit too (a run stopped by its watchdog leaves no server process pinned). */
const pinned = new Set<() => void>();
process.once("exit", () => {
  for (const undo of pinned) undo();
});

/** Pins every thread of each process to `cpus`; returns what puts each back as it was. */
function pin(pids: number[], cpus: string): () => void {
  const before: [number, string][] = [];
  for (const pid of pids)
    for (const tid of threads(pid)) {
      const was = affinity(tid);
      if (was === undefined) continue;
      try {
        execFileSync("taskset", ["-c", "-p", cpus, String(tid)], { stdio: "ignore" });
        before.push([tid, was]);
      } catch {
        // Gone meanwhile.
      }
    }
  const undo = () => {
    pinned.delete(undo);
    for (const [tid, was] of before)
      try {
        execFileSync("taskset", ["-c", "-p", was, String(tid)], { stdio: "ignore" });
      } catch {
        // Gone meanwhile.
      }
  };
  pinned.add(undo);
  return undo;
}

/**
 * The PostgreSQL server processes that work for one database: its backends (the service's pool, connected by the
 * row's warm-up) and the server's own background processes (WAL writer, checkpointer…), which have no database.
 * Other databases' backends (other users of a shared server) are left alone.
 */
async function postgresPids(url: string): Promise<number[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const r = await c.query<{ pid: number }>(
      "SELECT pid FROM pg_stat_activity WHERE (datname = current_database() OR datname IS NULL) AND pid <> pg_backend_pid()",
    );
    return r.rows.map((x) => x.pid);
  } catch {
    return [];
  } finally {
    await c.end();
  }
}

/**
 * Pins the service processes and this process (whose children, the load generators, inherit it) to `serviceCpus`,
 * and, with a database URL, that database's PostgreSQL processes to `postgresCpus`; returns what undoes it all.
 */
export async function pinRow(
  servicePids: number[],
  databaseUrl: string | undefined,
  cpus: { service: string; postgres: string },
): Promise<() => void> {
  const undo = [pin([...servicePids, process.pid], cpus.service)];
  if (databaseUrl) undo.push(pin(await postgresPids(databaseUrl), cpus.postgres));
  return () => {
    for (const u of undo.reverse()) u();
  };
}
