import { randomInt } from "node:crypto";
import { readFileSync } from "node:fs";
import { createServer } from "node:net";

/**
 * Loopback ports for servers that must know their port before they start (a host page whose origin a chatbot
 * allows, a child process given PORT, PostgreSQL, PgBouncer). A port that listen(0) handed out and that was closed
 * again is free for the kernel to hand out next, to another listen(0) or to any outgoing connection on the
 * machine: on a busy machine one took it between the choice and the server's listen (EADDRINUSE). Ports are
 * therefore chosen below the kernel's ephemeral range, which it never hands out by itself; only another test that
 * chose the same one at the same moment can take it, and `onFreePort` starts again on a new port then.
 */

/** The lowest port chosen: above the usual fixed services' ports. */
const LOWEST = 10_000;

/** The first port of the kernel's ephemeral range (Linux: /proc/sys/net/ipv4/ip_local_port_range). */
function ephemeralStart(): number {
  try {
    const first = Number(readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/)[0]);
    if (Number.isInteger(first) && first > 0) return first;
  } catch {
    // Not Linux: the IANA range's start, which other systems use.
  }
  return 49_152;
}

/** Whether a server can listen on `port` of 127.0.0.1 now (it is closed again before this resolves). */
function listenable(port: number): Promise<number | undefined> {
  return new Promise((resolve) => {
    const s = createServer();
    s.once("error", () => resolve(undefined));
    s.listen(port, "127.0.0.1", () => {
      const { port: bound } = s.address() as { port: number };
      s.close(() => resolve(bound));
    });
  });
}

/** A loopback port nothing listens on now, outside the range the kernel hands out by itself. */
export async function freePort(): Promise<number> {
  const below = ephemeralStart();
  if (below - LOWEST >= 1_000) {
    for (let i = 0; i < 20; i++) {
      const port = await listenable(LOWEST + randomInt(below - LOWEST));
      if (port !== undefined) return port;
    }
  }
  // No room below the ephemeral range (or it is all taken): one the kernel chooses.
  const port = await listenable(0);
  if (port === undefined) throw new Error("no free loopback port");
  return port;
}

/** Whether `e` (an error, or a child process's output in its message) says the address was taken. */
function addressInUse(e: unknown): boolean {
  if ((e as { code?: unknown } | undefined)?.code === "EADDRINUSE") return true;
  const text = e instanceof Error ? `${e.message}\n${e.stack ?? ""}` : String(e);
  return /EADDRINUSE|address already in use/i.test(text);
}

/**
 * Runs `start` on a free port, and again on another one when the port was taken before `start` listened on it (a
 * few times). `start` must leave nothing running when it fails.
 */
export async function onFreePort<T>(start: (port: number) => Promise<T>, attempts = 5): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    try {
      return await start(port);
    } catch (e) {
      if (attempt >= attempts || !addressInUse(e)) throw e;
    }
  }
}
