import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // A test that prints a credential fails (nothing secret in the CI log).
    setupFiles: ["test/setup/no-secrets-in-output.ts"],
    // Installs the Debian packages some suites need, when it can (see the README's Quick start).
    globalSetup: ["test/setup/install-system-packages.ts"],
    pool: "forks",
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Two cores: more parallel files only adds contention between real servers.
    maxWorkers: 2,
  },
});
