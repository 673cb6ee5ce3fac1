import { readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";
import { embeddedPostgresUnavailable } from "./test/helpers/embedded-postgres.js";
import { adminUrl } from "./test/helpers/postgres.js";
import { pgbouncerPath } from "./test/helpers/system-packages.js";
import { scaled, TEST_WORKERS, TIME_SCALE, TIME_SCALE_SOURCE } from "./test/helpers/time-scale.js";
import { ownProcessReason } from "./test/setup/own-process.js";

/** The API suites that also run on PostgreSQL (AIAGENT_TEST_BACKEND=postgres), the same cases on the other back end. */
const ON_POSTGRES = [
  "test/mail/offline-reply.test.ts",
  "test/mail/transcript.test.ts",
  "test/mail/mentions.test.ts",
  "test/mail/sla-alert.test.ts",
  "test/knowledge/sources.test.ts",
  "test/knowledge/embeddings.test.ts",
  "test/hardening/knowledge-hostile.test.ts",
  "test/agent/tools.test.ts",
  "test/agent/search-knowledge.test.ts",
  "test/knowledge/search.test.ts",
  "test/agent/approvals.test.ts",
  "test/agent/replay.test.ts",
  "test/agent/replay-draft-parts.test.ts",
  "test/agent/handover.test.ts",
  "test/api/tokens.test.ts",
  "test/api/viewing.test.ts",
  "test/api/account-api.test.ts",
  "test/api/token-issue.test.ts",
  "test/api/conversations-access.test.ts",
  "test/api/conversations-read.test.ts",
  "test/api/message-pages.test.ts",
  "test/api/session-last-use.test.ts",
  "test/api/conversations-search-filter.test.ts",
  "test/api/contact-conversations.test.ts",
  "test/api/search-folding.test.ts",
  "test/api/watch-conversation.test.ts",
  "test/api/idempotency.test.ts",
  "test/api/watch-resume.test.ts",
  "test/api/watch-catch-up.test.ts",
  "test/api/typing.test.ts",
  "test/api/operator-picture.test.ts",
  "test/api/attachments.test.ts",
  "test/api/team-notes.test.ts",
  "test/api/timeline.test.ts",
  "test/api/message-search.test.ts",
  "test/api/labels.test.ts",
  "test/api/teams.test.ts",
  "test/api/auto-assignment.test.ts",
  "test/api/snooze-sla.test.ts",
  "test/api/reports.test.ts",
  "test/webhooks/delivery.test.ts",
  "test/webhooks/fair-slots.test.ts",
  "test/webhooks/events.test.ts",
  "test/webhooks/access.test.ts",
  "test/webhooks/rotate-secret.test.ts",
  "test/api/sessions.test.ts",
  "test/hardening/hostile-contract.test.ts",
  "test/api/revocation.test.ts",
  "test/api/revocation-pushed.test.ts",
  "test/api/slow-reader.test.ts",
  "test/api/invitations.test.ts",
  "test/api/json-input-edges.test.ts",
  "test/api/contention.test.ts",
  "test/privacy/erasure.test.ts",
  "test/privacy/audit-log.test.ts",
  "test/ops/metrics.test.ts",
  "test/events/one-event-path.test.ts",
  "test/api/chatbot-appearance.test.ts",
  "test/api/frame-languages.test.ts",
  "test/api/chatbot-picture.test.ts",
  "test/api/rating.test.ts",
  "test/api/contact-list-cache.test.ts",
  "test/api/one-answer.test.ts",
  "test/hardening/customer-limits.test.ts",
  "test/clients/openapi-contract.test.ts",
];

/** Suites that also run on PostgreSQL through PgBouncer in transaction pooling mode (AIAGENT_TEST_BACKEND=pgbouncer). */
const THROUGH_PGBOUNCER = [
  "test/api/tokens.test.ts",
  "test/api/viewing.test.ts",
  "test/api/token-issue.test.ts",
  "test/api/conversations-read.test.ts",
  "test/api/message-pages.test.ts",
  "test/api/watch-conversation.test.ts",
  "test/api/contention.test.ts",
  "test/webhooks/events.test.ts",
];

export default defineConfig(async () => {
  // A server that answers, or one the global setup starts from embedded-postgres (test/setup/postgres-run.ts).
  const unavailable = (await adminUrl()) ? undefined : embeddedPostgresUnavailable();
  const postgres = unavailable === undefined;
  if (!postgres) console.warn(`API suites on PostgreSQL skipped: no PostgreSQL server answers and ${unavailable}`);
  else if (!pgbouncerPath())
    console.warn(
      "API suites through PgBouncer skipped: needs Debian's pgbouncer; install with: sudo apt-get install pgbouncer",
    );
  if (TIME_SCALE_SOURCE !== "set")
    console.warn(`AIAGENT_TEST_TIME_SCALE=${TIME_SCALE} (${TIME_SCALE_SOURCE}): every time-out is multiplied by it`);
  const common = {
    // A test that prints a credential fails; whatever a file leaves open is closed when it ends (pass or fail).
    setupFiles: ["test/setup/no-secrets-in-output.ts", "test/setup/leftovers.ts"],
    // AIAGENT_TEST_TIME_SCALE (by default from the machine's load; see test/helpers/time-scale.ts) multiplies these
    // and every helper's wait bound.
    testTimeout: scaled(30_000),
    hookTimeout: scaled(60_000),
  };
  // Most files share their worker's process, one file after another: each file in a fresh process loaded the
  // service's modules anew, about 1.3 s of CPU a file (Vitest's `import`), a quarter of the suite's CPU. A file that
  // reaches beyond itself (drives Chromium, measures the process's memory, changes the environment, process-wide
  // state, the runner's configuration or clock, runs Vitest itself, or imports a test module whose state would
  // outlive the file; test/setup/own-process.ts finds them in its text and the test modules it imports) keeps a
  // process of its own, in the `…-own-process` twin of its project (docs/development.md, "Shared worker processes").
  // AIAGENT_TEST_ISOLATE=1 gives every file its own process (to compare, or to rule out one file's state reaching
  // another); AIAGENT_TEST_ISOLATE=0 shares every worker's process between all its files.
  const sharing =
    process.env.AIAGENT_TEST_ISOLATE === "1" ? "none" : process.env.AIAGENT_TEST_ISOLATE === "0" ? "all" : "safe";
  const root = fileURLToPath(new URL(".", import.meta.url));
  const testFiles = (readdirSync(`${root}/test`, { recursive: true }) as string[])
    .filter((f) => f.endsWith(".test.ts"))
    .map((f) => `test/${f.replaceAll("\\", "/")}`);
  const ownProcess = new Set(
    testFiles.filter((f) => sharing === "none" || (sharing === "safe" && ownProcessReason(f, root))),
  );
  /** A project's files as two projects: those that share their worker's process, and those that need their own. */
  const split = (name: string, include: string[], rest: Record<string, unknown>) => {
    const own = include.filter((f) => ownProcess.has(f));
    const shared = include.filter((f) => !ownProcess.has(f));
    return [
      ...(shared.length > 0
        ? [{ extends: true, test: { name, include: shared, ...common, ...rest, isolate: false } }]
        : []),
      ...(own.length > 0
        ? [{ extends: true, test: { name: `${name}-own-process`, include: own, ...common, ...rest, isolate: true } }]
        : []),
    ];
  };
  return {
    test: {
      // Installs the Debian packages some suites need, when it can (see the README's Quick start).
      globalSetup: [
        "test/setup/install-system-packages.ts",
        "test/setup/postgres-run.ts",
        "test/setup/pgbouncer-run.ts",
        // The run's one Chromium, started when a browser file first asks for it.
        "test/setup/chromium-run.ts",
      ],
      // The default console report, and Vitest's JSON report that .ci/run reads for its closing line
      // (scripts/test-summary.mjs prints "N passed, N failed, N skipped" from it).
      reporters: ["default", ["json", { outputFile: "tmp/vitest-report.json" }]],
      pool: "forks",
      // Two cores: more parallel files only adds contention between real servers.
      maxWorkers: TEST_WORKERS,
      projects: [
        ...split("all", testFiles, {}),
        ...(postgres ? split("api-postgres", ON_POSTGRES, { env: { AIAGENT_TEST_BACKEND: "postgres" } }) : []),
        ...(postgres && pgbouncerPath()
          ? split("api-pgbouncer", THROUGH_PGBOUNCER, { env: { AIAGENT_TEST_BACKEND: "pgbouncer" } })
          : []),
      ],
    },
  };
});
