import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type App, type AppOverrides, buildApp } from "../../src/app.js";
import { loadConfig } from "../../src/config.js";
import { createLogger } from "../../src/log.js";
import type { RunningServer } from "../../src/protocol/http/server.js";
import { createTestDatabase, type TestDatabase } from "./postgres.js";

/** One instance of the service: its app and its HTTP server on a loopback port. */
export interface Instance {
  app: App;
  server: RunningServer;
  url: string;
}

/** `n` instances of the service on one fresh PostgreSQL database (`env` added to each one's, `overrides` to each app);
 * `stop` closes them and drops it. */
export async function startInstances(
  n: number,
  env: Record<string, string> = {},
  overrides: AppOverrides = {},
): Promise<{ instances: Instance[]; stop(): Promise<void> }> {
  const database: TestDatabase = await createTestDatabase();
  const dir = mkdtempSync(join(tmpdir(), "aiagent-instances-"));
  const instances: Instance[] = [];
  for (let i = 0; i < n; i++) {
    const config = loadConfig({
      AIAGENT_DATABASE_URL: database.url,
      AIAGENT_DB: join(dir, "unused.db"),
      AIAGENT_PORT: "0",
      AIAGENT_SECRETS: "a-test-secret-for-several-instances-0123456789",
      AIAGENT_LOG_LEVEL: "silent",
      ...env,
    });
    const app = await buildApp(config, createLogger("silent"), overrides);
    const server = await app.listen();
    instances.push({ app, server, url: server.url });
  }
  return {
    instances,
    async stop() {
      for (const i of instances) {
        await i.server.close(1000);
        await i.app.close();
      }
      await database.drop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
