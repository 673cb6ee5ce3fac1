import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Installs the Debian packages some suites need, when it can (see the README's Quick start).
    globalSetup: ["test/setup/install-system-packages.ts"],
    pool: "forks",
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Two cores: more parallel files only adds contention between real servers.
    maxWorkers: 2,
  },
});
