import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { type App, buildApp } from "../../src/app.js";
import { bootstrapDemo, DEMO_EMAIL } from "../../src/bootstrap.js";
import { loadConfig } from "../../src/config.js";
import { createLogger } from "../../src/log.js";
import { createTestDatabase, postgresSkipReason, type TestDatabase } from "../helpers/postgres.js";

const skip = await postgresSkipReason();
if (skip) console.warn(`start-up on PostgreSQL skipped: ${skip}`);

describe.skipIf(skip !== undefined)("three instances starting at once on one empty PostgreSQL", () => {
  const dir = mkdtempSync(join(tmpdir(), "aiagent-startup-"));
  let database: TestDatabase | undefined;
  const apps: App[] = [];

  afterAll(async () => {
    for (const app of apps) await app.close();
    await database?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("migrate once, make one signing key ring and one demo account between them, and all serve it", async () => {
    database = await createTestDatabase({ empty: true });
    const config = loadConfig({
      AIAGENT_DATABASE_URL: database.url,
      AIAGENT_DB: join(dir, "unused.db"),
      AIAGENT_SECRETS: "a-test-secret-for-three-instances-0123456789",
    });
    apps.push(...(await Promise.all([0, 1, 2].map(() => buildApp(config, createLogger("silent"))))));
    const demos = await Promise.all(apps.map((app) => bootstrapDemo(app, "http://127.0.0.1:8080")));
    expect(demos.every((d) => d !== undefined)).toBe(true);
    // One first start; the others renewed the demo key of the account it made.
    expect(demos.filter((d) => d!.firstStart)).toHaveLength(1);
    expect(new Set(demos.map((d) => d!.chatbotId)).size).toBe(1);
    const accounts = await apps[0]!.store.accounts.page("", 10);
    expect(accounts.map((a) => a.email)).toEqual([DEMO_EMAIL]);
    // Every instance signs with a key the others verify (one active key in the database).
    const active = (await apps[0]!.store.signingKeys.list()).filter((k) => k.retiredAt === null);
    expect(active).toHaveLength(1);
    // Started together, no instance revoked another's demo key: each has its own, working (issue 31).
    const working = (await apps[0]!.store.apiKeys.listForAccount(accounts[0]!.accountId)).filter(
      (k) => k.revokedAt === null,
    );
    expect(working.map((k) => k.apiKeyId).sort()).toEqual(demos.map((d) => d!.apiKeyId).sort());
    const key = demos.find((d) => d!.clientApiKey.startsWith(working[0]!.hint))!.clientApiKey;
    const t = await apps[1]!.tokens.idTokens.getIdToken({ email: DEMO_EMAIL, clientApiKey: key });
    await expect(apps[2]!.tokens.checks.authenticateAccount(t.idToken)).resolves.toMatchObject({ email: DEMO_EMAIL });
  });

  it("make exactly one active signing key, round after round, and each verifies the tokens the others sign", async () => {
    // The first key is made by whoever finds none: three at once must not leave two keys, or none, active.
    for (let round = 0; round < 4; round++) {
      // The schema is there already (the first test is the one about migrating at once): what is raced here is the
      // first key.
      const db = await createTestDatabase();
      const started: App[] = [];
      try {
        const config = loadConfig({
          AIAGENT_DATABASE_URL: db.url,
          AIAGENT_DB: join(dir, "unused.db"),
          AIAGENT_SECRETS: "a-test-secret-for-three-instances-0123456789",
        });
        started.push(...(await Promise.all([0, 1, 2].map(() => buildApp(config, createLogger("silent"))))));
        const keys = await started[0]!.store.signingKeys.list();
        expect(keys.filter((k) => k.retiredAt === null)).toHaveLength(1);
        const email = `owner${round}@startup.example`;
        await started[0]!.accounts.createAccount(email, "correct horse battery staple");
        const { clientApiKey } = await started[0]!.accounts.createApiKey(email);
        for (const signer of started) {
          const t = await signer.tokens.idTokens.getIdToken({ email, clientApiKey });
          for (const verifier of started)
            await expect(verifier.tokens.checks.authenticateAccount(t.idToken)).resolves.toMatchObject({ email });
        }
      } finally {
        for (const app of started) await app.close();
        await db.drop();
      }
    }
  });
});
