import { defineConfig } from "vitest/config";
import { embeddedPostgresUnavailable } from "./test/helpers/embedded-postgres.js";
import { adminUrl } from "./test/helpers/postgres.js";
import { pgbouncerPath } from "./test/helpers/system-packages.js";
import { scaled, TEST_WORKERS, TIME_SCALE, TIME_SCALE_SOURCE } from "./test/helpers/time-scale.js";

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
  const shared = {
    // A test that prints a credential fails; whatever a file leaves open is closed when it ends (pass or fail).
    setupFiles: ["test/setup/no-secrets-in-output.ts", "test/setup/leftovers.ts"],
    // AIAGENT_TEST_TIME_SCALE (by default from the machine's load; see test/helpers/time-scale.ts) multiplies these
    // and every helper's wait bound.
    testTimeout: scaled(30_000),
    hookTimeout: scaled(60_000),
  };
  // Each file runs in a fresh process (Vitest's default). AIAGENT_TEST_ISOLATE=0 lets the files of a worker share its
  // process and loaded modules in the `all` and `api-pgbouncer` projects instead (about 1.2 s of CPU a file saved,
  // measured on test/api: 61.8 s of CPU for 20 files isolated, 37.2 s shared). It is not the default: in the first
  // whole-suite run so (session 18, quiet machine), once one file's state had leaked into a worker, every later
  // PostgreSQL file of that worker failed or skipped in its set-up (the probe for a server memoised "none"), and two
  // Chromium steps failed that pass isolated. A file's own process is what keeps one file's leftovers out of the next.
  const shareWorkers = process.env.AIAGENT_TEST_ISOLATE === "0";
  return {
    test: {
      // Installs the Debian packages some suites need, when it can (see the README's Quick start).
      globalSetup: [
        "test/setup/install-system-packages.ts",
        "test/setup/postgres-run.ts",
        "test/setup/pgbouncer-run.ts",
      ],
      // The default console report, and Vitest's JSON report that .ci/run reads for its closing line
      // (scripts/test-summary.mjs prints "N passed, N failed, N skipped" from it).
      reporters: ["default", ["json", { outputFile: "tmp/vitest-report.json" }]],
      pool: "forks",
      // Two cores: more parallel files only adds contention between real servers.
      maxWorkers: TEST_WORKERS,
      projects: [
        { extends: true, test: { name: "all", include: ["test/**/*.test.ts"], ...shared, isolate: !shareWorkers } },
        ...(postgres
          ? [
              {
                extends: true,
                test: {
                  name: "api-postgres",
                  include: ON_POSTGRES,
                  env: { AIAGENT_TEST_BACKEND: "postgres" },
                  ...shared,
                },
              },
              ...(pgbouncerPath()
                ? [
                    {
                      extends: true,
                      test: {
                        name: "api-pgbouncer",
                        include: THROUGH_PGBOUNCER,
                        env: { AIAGENT_TEST_BACKEND: "pgbouncer" },
                        ...shared,
                        isolate: !shareWorkers,
                      },
                    },
                  ]
                : []),
            ]
          : []),
      ],
    },
  };
});
