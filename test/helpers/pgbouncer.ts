import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { chownSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { killAtExit, removeAtExit } from "./leftovers.js";
import { onFreePort } from "./ports.js";
import { pgbouncerPath } from "./system-packages.js";
import { scaled } from "./time-scale.js";

/** A PgBouncer of the tests' own, in transaction pooling mode, in front of the tests' PostgreSQL server. */
export interface RunningPgBouncer {
  /** host:port of the pooler on 127.0.0.1. */
  host: string;
  stop(): Promise<void>;
}

/** The same database reached through the pooler (the user and database of `url`, the pooler's host and port). */
export function throughPgBouncer(url: string, pooler: string): string {
  const u = new URL(url);
  u.host = pooler;
  return u.toString();
}

function answers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const c = connect(port, "127.0.0.1");
    c.once("connect", () => {
      c.destroy();
      resolve(true);
    });
    c.once("error", () => resolve(false));
  });
}

/**
 * Starts pgbouncer with a configuration of its own: every database of the server at `adminUrl` (trust auth, as the
 * tests' server has), pool_mode=transaction, listening on a free loopback port.
 */
export async function startPgBouncer(binary: string, adminUrl: string): Promise<RunningPgBouncer> {
  const target = new URL(adminUrl);
  const user = decodeURIComponent(target.username || "postgres");
  const dir = mkdtempSync(join(tmpdir(), "aiagent-pgbouncer-"));
  // However the run ends, the folder goes (and the process, below).
  const forgetDir = removeAtExit(dir);
  writeFileSync(join(dir, "users.txt"), `"${user}" ""\n`);
  // Started again on another port if this one was taken before PgBouncer listened on it.
  const { port, child, exited, forgetChild } = await onFreePort((port) => launch(port));
  return {
    host: `127.0.0.1:${port}`,
    async stop() {
      if (child.exitCode === null) {
        child.kill("SIGINT");
        await Promise.race([exited, new Promise((r) => setTimeout(r, 3000))]);
        if (child.exitCode === null) child.kill("SIGKILL");
      }
      rmSync(dir, { recursive: true, force: true });
      forgetChild();
      forgetDir();
    },
  };

  async function launch(port: number) {
    writeFileSync(
      join(dir, "pgbouncer.ini"),
      [
        "[databases]",
        // A transaction pooler passes no startup options: the lock timeout of statements outside a unit of work is
        // set on each server connection here (units set their own with SET LOCAL).
        `* = host=${target.hostname} port=${target.port || 5432} user=${user} connect_query='SET lock_timeout = 1000'`,
        "[pgbouncer]",
        "listen_addr = 127.0.0.1",
        `listen_port = ${port}`,
        `unix_socket_dir = ${dir}`,
        "auth_type = trust",
        `auth_file = ${join(dir, "users.txt")}`,
        "pool_mode = transaction",
        "max_client_conn = 500",
        "default_pool_size = 20",
        "max_db_connections = 40",
        // node-pg sends it at start-up; the service sends no other option behind a transaction pooler.
        "ignore_startup_parameters = extra_float_digits",
        `logfile = ${join(dir, "pgbouncer.log")}`,
        "",
      ].join("\n"),
    );
    // PgBouncer refuses to run as root: it then runs as the system user "postgres" (the server's own).
    const asRoot = process.getuid?.() === 0;
    if (asRoot) {
      const id = (flag: string) => Number(execFileSync("id", [flag, "postgres"], { encoding: "utf8" }).trim());
      for (const f of ["", "pgbouncer.ini", "users.txt"]) chownSync(join(dir, f), id("-u"), id("-g"));
    }
    const child: ChildProcess = spawn(binary, [...(asRoot ? ["-u", "postgres"] : []), join(dir, "pgbouncer.ini")], {
      stdio: "ignore",
    });
    const exited = new Promise<void>((r) => child.once("exit", () => r()));
    const forgetChild = killAtExit(child);
    // Its own "listening" line, not a connection: another process that took the port would answer one too.
    const listening = () => logText().includes(`listening on 127.0.0.1:${port}`);
    for (let i = 0; i < scaled(100) && !listening(); i++) {
      if (child.exitCode !== null) {
        forgetChild();
        throw new Error(`pgbouncer exited (${child.exitCode}); see ${dir}/pgbouncer.log:\n${logText()}`);
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    if (!listening() || !(await answers(port))) {
      child.kill("SIGKILL");
      await exited;
      forgetChild();
      throw new Error(`pgbouncer did not listen within ${scaled(5)} s: ${logText()}`);
    }
    return { port, child, exited, forgetChild };
  }

  function logText(): string {
    try {
      return readFileSync(join(dir, "pgbouncer.log"), "utf8");
    } catch {
      return "";
    }
  }
}

/** Why the suites through the run's PgBouncer cannot run here (one line naming the package), or undefined. */
export function pgbouncerSkipReason(env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (!pgbouncerPath(env)) return "needs Debian's pgbouncer; install with: sudo apt-get install pgbouncer";
  if (!env.AIAGENT_TEST_PGBOUNCER_HOST) return "the run's PgBouncer did not start (see the run's first lines)";
  return undefined;
}

/** A test database's URL through the run's PgBouncer. */
export function pooledUrl(url: string): string {
  return throughPgBouncer(url, process.env.AIAGENT_TEST_PGBOUNCER_HOST!);
}
