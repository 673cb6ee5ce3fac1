import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { aiagentCommand } from "../helpers/command.js";
import {
  type EmbeddedServer,
  embeddedPostgresUnavailable,
  startEmbeddedPostgres,
} from "../helpers/embedded-postgres.js";
import { freePort } from "../helpers/ports.js";
import { scaled } from "../helpers/time-scale.js";

// A real `aiagent serve` started while its PostgreSQL is not there yet (nothing listens on the database's port): it
// waits with back-off, says so in /readyz, does not exit, and becomes ready once a server starts on that port.
const ROOT = resolve(import.meta.dirname, "../..");
const skip = embeddedPostgresUnavailable();
if (skip) console.warn(`start before the database skipped: ${skip}`);

/** Polls `check` until it answers true (a condition, not a sleep); fails after `ms`. */
async function until(check: () => Promise<boolean>, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`not within ${ms} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe.skipIf(skip !== undefined)("an instance started before its PostgreSQL", () => {
  const dir = mkdtempSync(join(tmpdir(), "aiagent-before-db-"));
  let proc: ChildProcess | undefined;
  let database: EmbeddedServer | undefined;
  afterAll(async () => {
    proc?.kill("SIGKILL");
    await database?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it(
    "waits, answers /readyz 503 with the reason, never exits, and is ready once PostgreSQL comes up",
    async () => {
      const [pgPort, port] = [await freePort(), await freePort()];
      const password = randomBytes(12).toString("hex");
      const url = `http://127.0.0.1:${port}`;
      proc = spawn(process.execPath, [...aiagentCommand(), "serve"], {
        cwd: ROOT,
        env: {
          ...process.env,
          AIAGENT_DATABASE_URL: `postgres://postgres:${password}@127.0.0.1:${pgPort}/postgres`,
          AIAGENT_DB: join(dir, "unused.db"),
          AIAGENT_SECRETS: "a-test-secret-for-the-start-before-the-db-0123",
          AIAGENT_PORT: String(port),
          NODE_ENV: "production",
          AIAGENT_LOG_LEVEL: "error",
        },
        stdio: "ignore",
      });
      let exited: number | null | undefined;
      proc.once("exit", (code) => {
        exited = code;
      });
      let reason = "";
      await until(
        async () => {
          const r = await fetch(`${url}/readyz`);
          reason = ((await r.json()) as { reason?: string }).reason ?? "";
          return r.status === 503;
        },
        scaled(60_000),
        "/readyz answers 503 while the database is away",
      );
      expect(reason).toContain("waiting for the database");
      expect((await fetch(`${url}/healthz`)).status).toBe(200);
      const refused = await fetch(`${url}/v1/account`);
      expect(refused.status).toBe(503);
      expect(refused.headers.get("retry-after")).toBe("5");
      expect(exited).toBeUndefined();

      database = await startEmbeddedPostgres({ port: pgPort, password });
      await until(
        async () => (await fetch(`${url}/readyz`)).status === 200,
        scaled(90_000),
        "/readyz answers 200 once PostgreSQL is up",
      );
      expect(exited).toBeUndefined();
      expect(await (await fetch(`${url}/readyz`)).json()).toEqual({
        status: "ready",
        mail: { relay: "not configured" },
      });
    },
    scaled(180_000),
  );
});
