import { existsSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

/**
 * Which test files keep a process of their own when the others share their worker's (vitest.config.ts). A file shares
 * when nothing it or the test modules it imports does reaches beyond the file: a shared worker keeps the modules it
 * loaded (and their state) from one file to the next, and the process itself (its environment, listeners, memory,
 * children) too. A file that drives Chromium shares too: it connects to the run's one Chromium (test/frame/browser.ts,
 * test/setup/chromium-run.ts) with browsers and contexts of its own, which are closed when the file ends. What keeps a
 * file in its own process, found in its text or in that of a module under test/ it imports:
 */
const OWN_PROCESS: [why: string, pattern: RegExp][] = [
  ["measures the process's memory", /memoryUsage|heapUsed|heapTotal|\bgc\(|--expose-gc|getHeapStatistics/],
  [
    "changes the environment",
    /process\.env(\.\w+|\[[^\]]+\])\s*(=[^=]|\?\?=|\|\|=)|delete process\.env|process\.env\s*=[^=]|Object\.assign\(process\.env/,
  ],
  [
    "changes process-wide state",
    /process\.(on|once|chdir|umask|exit|exitCode|setMaxListeners|removeAllListeners)\b|globalThis\.\w+\s*=[^=]/,
  ],
  ["changes the runner's configuration or clock", /vi\.(setConfig|useFakeTimers|stubEnv|stubGlobal)/],
  ["runs Vitest itself", /vitest\/node|startVitest|"vitest", \["run"|npx vitest/],
];

/** Helpers every file may share: they keep no state that one file could leave for the next to trip over. */
const SHARED_HELPERS = new Set(["test/helpers/leftovers.ts", "test/helpers/time-scale.ts"]);

/**
 * A module imported by a test file is evaluated once in a shared process, and its top-level variables outlive the file
 * (the test file's own are made anew for each file). Such state keeps the file in its own process (a fixture's arrays
 * that each file fills: the BOLA files failed so), except in the helpers whose state is meant to outlive a file: the
 * open servers, folders and databases closed at each file's end, the run's template database, the compiled command,
 * unique-name counters (a `let` that starts at a number is taken for one), the browsers a file left open. A hook such a module registers at its top
 * level would be registered for the first file only, and keeps the file in its own process too.
 */
const STATE =
  /^(export )?let \w+\b(?! = \d+;)|^(export )?const \w+(: [^=]+)? = (new (Map|Set|WeakMap|Array)(<[^\n]*>)?\(\)|\[\]|\{\})|^(beforeAll|afterAll|beforeEach|afterEach)\(/m;
const STATE_OUTLIVES_FILE = new Set([
  "test/helpers/server.ts",
  "test/helpers/postgres.ts",
  "test/helpers/command.ts",
  "test/helpers/approvals.ts",
  "test/frame/browser.ts",
]);

/** Each module's text, read once per configuration load: the helpers are imported by most of the files. */
const texts = new Map<string, string>();
function source(file: string): string {
  let text = texts.get(file);
  if (text === undefined) texts.set(file, (text = readFileSync(file, "utf8")));
  return text;
}

/** The test modules (under test/) a file imports, itself included, transitively. */
function testModules(file: string, root: string, seen = new Set<string>()): Set<string> {
  if (seen.has(file)) return seen;
  seen.add(file);
  for (const m of source(file).matchAll(/(?:from|import)\s*\(?\s*"(\.{1,2}\/[^"]+)"/g)) {
    const target = resolve(dirname(file), m[1]!.replace(/\.js$/, ".ts"));
    if (!target.startsWith(join(root, "test")) || !existsSync(target)) continue;
    if (SHARED_HELPERS.has(relative(root, target))) continue;
    testModules(target, root, seen);
  }
  return seen;
}

/** Why the file needs a process of its own, or undefined when it may share one. */
export function ownProcessReason(file: string, root: string): string | undefined {
  const own = resolve(root, file);
  for (const m of testModules(own, root)) {
    const text = source(m);
    for (const [why, pattern] of OWN_PROCESS) if (pattern.test(text)) return `${why} (${relative(root, m)})`;
    if (m !== own && !STATE_OUTLIVES_FILE.has(relative(root, m)) && STATE.test(text))
      return `imports a module that keeps state between files (${relative(root, m)})`;
  }
  return undefined;
}
