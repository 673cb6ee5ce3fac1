import { spawnSync } from "node:child_process";
import { ALL_NEEDS, missingPackages, which } from "../helpers/system-packages.js";
import { scaled } from "../helpers/time-scale.js";

type Env = NodeJS.ProcessEnv;

/**
 * Installs the Debian packages the suites need and this machine lacks, when it can: as root, with apt-get, and unless
 * AIAGENT_TEST_INSTALL=0. Never waits for a prompt (no terminal, noninteractive, -y, a time limit). Whatever is still
 * missing afterwards makes only the suites that need it skip, each with its own line.
 */
export function installMissing(
  env: Env = process.env,
  log: (line: string) => void = console.log,
  isRoot = process.getuid?.() === 0,
): void {
  if (env.AIAGENT_TEST_INSTALL === "0") return;
  const missing = missingPackages(ALL_NEEDS, env);
  if (missing.length === 0) return;
  const aptGet = which("apt-get", env);
  if (!isRoot || !aptGet) return;
  log(`npm test: installing Debian packages ${missing.join(" ")} with apt-get (AIAGENT_TEST_INSTALL=0 turns this off)`);
  const aptEnv = { ...env, DEBIAN_FRONTEND: "noninteractive" };
  const apt = (args: string[]) =>
    spawnSync(aptGet, args, { env: aptEnv, stdio: ["ignore", "ignore", "pipe"], timeout: scaled(600_000) });
  const install = () =>
    apt(["install", "-y", "-qq", "-o", "Dpkg::Options::=--force-confold", "-o", "DPkg::Lock::Timeout=60", ...missing]);
  let r = install();
  // A fresh machine's package lists may be empty or stale: read them once, then try again.
  if (r.status !== 0 && apt(["update", "-qq"]).status === 0) r = install();
  const left = missingPackages(ALL_NEEDS, env);
  if (left.length > 0)
    log(
      `npm test: could not install ${left.join(" ")} (${r.stderr?.toString().trim().split("\n").at(-1) ?? `exit ${r.status}`}); the suites that need them are skipped`,
    );
}

/** Vitest global setup. */
export default function setup(): void {
  installMissing();
}
