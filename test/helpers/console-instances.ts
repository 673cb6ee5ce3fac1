import type { Browser } from "playwright-core";
import { test } from "vitest";
import type { App, AppOverrides } from "../../src/app.js";
import { browserForFile } from "./browser-fixtures.js";
import { TestClock } from "./clock.js";
import { consoleAndFrameRoutes } from "./console-routes.js";
import { type Instance, startInstances } from "./instances.js";
import { postgresSkipReason } from "./postgres.js";
import { createTestAccount, startServer, type TestAccount } from "./server.js";

// Issue 45's console days run twice: on one instance over SQLite, and on two instances over one PostgreSQL database
// (people signed in to either, the periodic checks of one seen on the other). This registers both tests of a play.

/** Where one run of a play happens. On SQLite `one` and `two` are the same instance. */
export interface ConsoleRun {
  browser: Browser;
  /** The first instance's address (the admin's). */
  one: string;
  /** The second instance's address. */
  two: string;
  /** An account with a chatbot, made on the first instance. */
  account: TestAccount;
  /** The clock every instance reads: moved forward, it moves for all. */
  clock: TestClock;
  /** The first instance's app (its snooze and SLA check, `timers.check()`). */
  app: App;
}

const overrides: AppOverrides = { extraRoutes: consoleAndFrameRoutes };

/**
 * Chromium for the file (with `canRun` false nothing starts), and `twice(name, play, timeout)`, which registers
 * "`name`, on one instance over SQLite" and "`name`, on two instances over one PostgreSQL" (skipped, saying why,
 * where no PostgreSQL answers). Each run starts and stops its own instances.
 */
export async function consoleOnBothBackends(canRun: boolean) {
  const pgSkip = canRun ? await postgresSkipReason() : undefined;
  if (pgSkip) console.warn(`console runs on two PostgreSQL instances skipped: ${pgSkip}`);
  const fx = browserForFile(canRun);
  return {
    twice(name: string, play: (run: ConsoleRun) => Promise<void>, timeout: number): void {
      test(
        `${name}, on one instance over SQLite`,
        async () => {
          const s = await startServer({ overrides });
          try {
            const account = await s.account();
            await play({ browser: fx.browser, one: s.url, two: s.url, account, clock: s.clock, app: s.app });
          } finally {
            await s.close(true);
          }
        },
        timeout,
      );
      test.skipIf(pgSkip !== undefined)(
        `${name}, on two instances over one PostgreSQL`,
        async () => {
          const clock = new TestClock();
          const running = await startInstances(2, {}, { ...overrides, clock });
          const [one, two] = running.instances as [Instance, Instance];
          try {
            const account = await createTestAccount(one.app, `owner-${Date.now().toString(36)}@console-run.example`);
            await play({ browser: fx.browser, one: one.url, two: two.url, account, clock, app: one.app });
          } finally {
            await running.stop();
          }
        },
        timeout,
      );
    },
  };
}
