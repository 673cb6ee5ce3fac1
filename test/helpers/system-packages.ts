import { spawnSync } from "node:child_process";
import { accessSync, constants, existsSync } from "node:fs";
import { delimiter, join, relative } from "node:path";
import { scaled } from "./time-scale.js";

// The Debian packages some suites need. `npm test` installs the missing ones when it can (test/setup/), and a suite
// whose package is still missing is skipped with one line naming it. AIAGENT_TEST_CHROMIUM, AIAGENT_TEST_PROTOC and
// AIAGENT_TEST_PROMETHEUS point the lookups elsewhere (a test points them at nothing to check the skip).

type Env = NodeJS.ProcessEnv;

/** A Debian package some suite needs. */
export type Need =
  | "chromium"
  | "pgbouncer"
  | "protobuf-compiler"
  | "protobuf-compiler-grpc"
  | "python3-grpcio"
  | "python3-protobuf"
  | "python3-fastapi"
  | "python3-flask"
  | "python3-uvicorn"
  | "python3-pip"
  | "wrk"
  | "prometheus"
  | "postgresql-client"
  | "git-doc"
  | "nginx-doc";
/** Every package `npm test` installs when it can (wrk: the benchmark's smoke test prefers it to autocannon). */
export const ALL_NEEDS: Need[] = [
  "chromium",
  "pgbouncer",
  "protobuf-compiler",
  "protobuf-compiler-grpc",
  "python3-grpcio",
  "python3-protobuf",
  "python3-fastapi",
  "python3-flask",
  "python3-uvicorn",
  "python3-pip",
  "wrk",
  "prometheus",
  "postgresql-client",
];

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The program's path: itself when it has a slash, else its first executable on PATH. */
export function which(program: string, env: Env = process.env): string | undefined {
  if (program.includes("/")) return executable(program) ? program : undefined;
  for (const dir of (env.PATH ?? "").split(delimiter))
    if (dir && executable(join(dir, program))) return join(dir, program);
  return undefined;
}

/** Debian's Chromium, unless AIAGENT_TEST_CHROMIUM names another. */
export function chromiumPath(env: Env = process.env): string {
  return env.AIAGENT_TEST_CHROMIUM || "/usr/bin/chromium";
}

/** Debian's pgbouncer, unless AIAGENT_TEST_PGBOUNCER names another. */
export function pgbouncerPath(env: Env = process.env): string | undefined {
  return which(env.AIAGENT_TEST_PGBOUNCER || "/usr/sbin/pgbouncer", env);
}

/** Debian's Prometheus server, unless AIAGENT_TEST_PROMETHEUS names another. */
export function prometheusPath(env: Env = process.env): string {
  return env.AIAGENT_TEST_PROMETHEUS || "/usr/bin/prometheus";
}

/** Debian's protoc, unless AIAGENT_TEST_PROTOC names another. */
export function protocPath(env: Env = process.env): string | undefined {
  return which(env.AIAGENT_TEST_PROTOC || "protoc", env);
}

function imports(python: string, module: string, env: Env): boolean {
  return spawnSync(python, ["-c", `import ${module}`], { env, stdio: "ignore", timeout: scaled(15_000) }).status === 0;
}

const PYTHONS = ["/usr/bin/python3", "python3"];

/** The first python3 that imports grpc and google.protobuf (Debian's is /usr/bin/python3, which a pyenv shim may hide). */
export function grpcPython(env: Env = process.env): string | undefined {
  return PYTHONS.find((py) => which(py, env) && imports(py, "grpc", env) && imports(py, "google.protobuf", env));
}

/** The first python3 with FastAPI, Flask, uvicorn and pip with setuptools and wheel (to build and run aiagent_embed). */
export function webPython(env: Env = process.env): string | undefined {
  return PYTHONS.find(
    (py) =>
      which(py, env) && ["fastapi", "flask", "uvicorn", "pip", "setuptools", "wheel"].every((m) => imports(py, m, env)),
  );
}

/** Which of these packages are missing here. */
export function missingPackages(needs: Need[], env: Env = process.env): Need[] {
  const pythonModule = (module: string) => PYTHONS.some((py) => which(py, env) && imports(py, module, env));
  const python = needs.some((n) => n.startsWith("python3-")) ? grpcPython(env) : undefined;
  const present: Record<Need, () => boolean> = {
    chromium: () => executable(chromiumPath(env)),
    pgbouncer: () => pgbouncerPath(env) !== undefined,
    "protobuf-compiler": () => protocPath(env) !== undefined,
    "protobuf-compiler-grpc": () => which("grpc_python_plugin", env) !== undefined,
    // Both modules must load in one python; when each loads only in another, both packages are named.
    "python3-grpcio": () => python !== undefined || (pythonModule("grpc") && !pythonModule("google.protobuf")),
    "python3-protobuf": () => python !== undefined || (pythonModule("google.protobuf") && !pythonModule("grpc")),
    "python3-fastapi": () => pythonModule("fastapi"),
    "python3-flask": () => pythonModule("flask"),
    "python3-uvicorn": () => pythonModule("uvicorn"),
    "python3-pip": () => ["pip", "setuptools", "wheel"].every(pythonModule),
    wrk: () => which("wrk", env) !== undefined,
    prometheus: () => executable(prometheusPath(env)),
    "postgresql-client": () => which("pg_dump", env) !== undefined && which("pg_restore", env) !== undefined,
    // The retrieval bench's documents (bench/retrieval.ts).
    "git-doc": () => existsSync("/usr/share/doc/git-doc/git-add.html"),
    "nginx-doc": () => existsSync("/usr/share/doc/nginx/php"),
  };
  return needs.filter((n) => !present[n]());
}

/**
 * True when the suite in `file` can run. Otherwise prints the one line that says which Debian packages it needs and
 * how to install them, and the suite skips (`describe.runIf(...)`): never a failure for a missing system package.
 */
export function suiteCanRun(file: string, needs: Need[], part = "", env: Env = process.env): boolean {
  const missing = missingPackages(needs, env);
  if (missing.length === 0) return true;
  console.warn(
    `SKIPPED ${relative(process.cwd(), file)}${part ? ` (${part})` : ""}: needs Debian's ${missing.join(", ")}; install with: sudo apt-get install ${missing.join(" ")}`,
  );
  return false;
}
