import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";

let ticksPerSecond: number | undefined;

/** Clock ticks per second of /proc/<pid>/stat times (USER_HZ, nearly always 100). */
function hz(): number {
  if (ticksPerSecond === undefined) {
    try {
      ticksPerSecond = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
    } catch {
      ticksPerSecond = 100;
    }
  }
  return ticksPerSecond;
}

/** User + system CPU time a process has used so far, in microseconds (from /proc/<pid>/stat). */
export function cpuMicros(pid: number): number {
  return statMicros(`/proc/${pid}/stat`);
}

/**
 * The same for a process's main thread alone (its event loop, /proc/<pid>/task/<pid>/stat): what bounds a closed-loop
 * row's req/s once the loop is saturated, where the pool threads' share (signatures, fsyncs) runs beside it.
 */
export function loopCpuMicros(pid: number): number {
  return statMicros(`/proc/${pid}/task/${pid}/stat`);
}

function statMicros(path: string): number {
  const stat = readFileSync(path, "utf8");
  // The command name may hold spaces: fields are counted after its closing parenthesis.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  return ((utime + stime) * 1e6) / hz();
}

/** Peak resident set size of a process so far, in bytes (VmHWM of /proc/<pid>/status). */
export function peakRss(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const m = /^VmHWM:\s+(\d+)\s+kB/m.exec(status);
  return m ? Number(m[1]) * 1024 : 0;
}
