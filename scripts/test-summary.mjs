#!/usr/bin/env node
// Prints the test run's closing line from Vitest's own JSON report, in the plain form programs reading a CI log know:
//   1812 passed, 0 failed, 4 skipped
// alone on the line, with no word before it: a line starting "Tests:" is also the start of Jest's summary
// ("Tests: 1 failed, 2 passed, 3 total"), and a reader that takes it for one finds no total and so no test.
// Exits non-zero when the report is missing, when any test or test file failed, or when no test passed at all.
import { readFileSync } from "node:fs";

const file = process.argv[2] ?? "tmp/vitest-report.json";
let report;
try {
  report = JSON.parse(readFileSync(file, "utf8"));
} catch (error) {
  console.log(
    `test-summary: no Vitest report at ${file} (${error.code ?? error.message}): the test run did not finish`,
  );
  console.log("0 passed, 0 failed");
  process.exit(1);
}
const passed = report.numPassedTests ?? 0;
const failed = (report.numFailedTests ?? 0) + 0;
const skipped = (report.numPendingTests ?? 0) + (report.numTodoTests ?? 0);
// Files whose run did not pass (a failed test, or a file that failed to load and so counted no test).
const failedFiles = (report.testResults ?? []).filter((f) => f.status !== "passed" && f.status !== "skipped").length;
// A file that fails to load counts no test; name it so the count is not read as clean.
if (failedFiles > 0) console.log(`test-summary: ${failedFiles} test file(s) failed`);
if (passed === 0) console.log("test-summary: no test passed; a run that executes no test is a failed run");
console.log(`${passed} passed, ${failed} failed${skipped > 0 ? `, ${skipped} skipped` : ""}`);
process.exit(failed > 0 || failedFiles > 0 || passed === 0 || report.success === false ? 1 : 0);
