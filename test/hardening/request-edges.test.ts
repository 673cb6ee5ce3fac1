import { connect, type Socket } from "node:net";
import { beforeAll, describe, expect, it } from "vitest";
import { serverForFile } from "../helpers/file-server.js";

// Issue 47: a client that sends an oversized body without `Expect: 100-continue` reads its 413 (the server keeps
// reading, discarding, for a bounded time and size before it closes: a lingering close), and a client that goes away
// in the middle of its request is an ordinary event of the network, logged at info level, not an internal error.
const fx = serverForFile();
let host: string;
let port: number;

beforeAll(async () => {
  const u = new URL(fx.s.url);
  host = u.hostname;
  port = Number(u.port);
});

const TWO_MB = 2 * 1024 * 1024;

/**
 * Writes a whole request on a raw socket, then reads until the server closes: what the client received. The socket
 * reads nothing until it has written everything, as a blocking client (`sendall`, then `recv`) does: a reset that
 * arrives first destroys the answer waiting in its kernel.
 */
function rawExchange(head: string, body: Buffer): Promise<{ received: string; error?: string }> {
  return new Promise((resolve) => {
    const socket: Socket = connect(port, host);
    socket.pause();
    const chunks: Buffer[] = [];
    let error: string | undefined;
    socket.on("data", (c: Buffer) => chunks.push(c));
    socket.on("error", (e: NodeJS.ErrnoException) => {
      error = e.code ?? e.message;
    });
    socket.on("close", () =>
      resolve({ received: Buffer.concat(chunks).toString("latin1"), ...(error ? { error } : {}) }),
    );
    socket.write(head);
    socket.write(body, () => socket.resume());
  });
}

describe("an oversized body always gets its 413 read by the client", () => {
  // On loopback the kernels' buffers hold a 2 MB body whole, so 8 MB is what shows the reset there.
  it.each([TWO_MB, 4 * TWO_MB])(
    "a raw socket writing a %d-byte body, without Expect, then reading, gets the 413, five times",
    async (size) => {
      const body = Buffer.alloc(size, 0x20);
      for (let i = 0; i < 5; i++) {
        const head =
          "POST /ai_agent/get_access_token HTTP/1.1\r\n" +
          `Host: ${host}:${port}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`;
        const r = await rawExchange(head, body);
        expect(r.received.slice(0, 40), `attempt ${i + 1}: ${r.error ?? ""}`).toMatch(/^HTTP\/1\.1 413 /);
        expect(r.received).toContain('"code":"resource_exhausted"');
        expect(r.received).toContain("body: must be at most");
      }
    },
  );

  it("the same without a declared length (chunked), five times", async () => {
    const chunk = Buffer.alloc(256 * 1024, 0x20);
    const framed = Buffer.concat(
      Array.from({ length: 8 }, () =>
        Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from("\r\n")]),
      ).concat([Buffer.from("0\r\n\r\n")]),
    );
    for (let i = 0; i < 5; i++) {
      const head =
        "POST /ai_agent/get_access_token HTTP/1.1\r\n" +
        `Host: ${host}:${port}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`;
      const r = await rawExchange(head, framed);
      expect(r.received.slice(0, 40), `attempt ${i + 1}: ${r.error ?? ""}`).toMatch(/^HTTP\/1\.1 413 /);
    }
  });

  it("fetch with a 2 MB body gets 413 and its JSON error, five times in a row", async () => {
    const body = JSON.stringify({ user_id: "u", chatbot_id: fx.a.chatbotId, client_api_key: fx.a.apiKey }).padEnd(
      TWO_MB,
      " ",
    );
    for (let i = 0; i < 5; i++) {
      const r = await fetch(`${fx.s.url}/ai_agent/get_access_token`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body,
      });
      expect(r.status, `attempt ${i + 1}`).toBe(413);
      expect(((await r.json()) as { code: string }).code).toBe("resource_exhausted");
    }
  });

  it("the discarding is bounded: an endless body is cut off, and the server goes on serving", async () => {
    const socket = connect(port, host);
    let received = "";
    socket.on("data", (c: Buffer) => {
      received += c.toString("latin1");
    });
    const closed = new Promise<void>((r) => socket.on("close", () => r()));
    socket.on("error", () => {});
    socket.write(
      "POST /ai_agent/get_access_token HTTP/1.1\r\n" +
        `Host: ${host}:${port}\r\nContent-Type: application/json\r\nContent-Length: ${1024 * 1024 * 1024}\r\n\r\n`,
    );
    // Keep writing (a 1 GiB body) until the server closes; the server stops reading well before the end.
    const block = Buffer.alloc(64 * 1024, 0x20);
    let sent = 0;
    let open = true;
    void closed.then(() => {
      open = false;
    });
    while (open && sent < 1024 * 1024 * 1024) {
      if (!socket.write(block)) await new Promise((r) => setTimeout(r, 1));
      sent += block.length;
      if (sent % (4 * 1024 * 1024) === 0) await new Promise((r) => setImmediate(r));
    }
    await closed;
    expect(received.slice(0, 40)).toMatch(/^HTTP\/1\.1 413 /);
    expect(sent).toBeLessThan(1024 * 1024 * 1024);
    expect((await fetch(`${fx.s.url}/healthz`)).status).toBe(200);
  });
});

describe("a client that goes away mid-request", () => {
  it("is logged at info level, never as an internal error", async () => {
    const before = fx.s.logs.length;
    const socket = connect(port, host);
    await new Promise<void>((r) => socket.on("connect", () => r()));
    socket.write(
      "POST /ai_agent/get_access_token HTTP/1.1\r\n" +
        `Host: ${host}:${port}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"user_id":`,
    );
    // The half-sent request, then the end of the connection: the server reads the head, then finds the body cut short.
    socket.end();
    socket.on("error", () => {});
    // The server notices, logs it, and goes on serving.
    await expect.poll(() => fx.s.logs.slice(before).some((l) => l.includes("client closed"))).toBe(true);
    const lines = fx.s.logs
      .slice(before)
      .map((l) => JSON.parse(l) as { level: string; msg?: string; message?: string });
    expect(lines.filter((l) => l.level === "error")).toEqual([]);
    expect(fx.s.logs.slice(before).join("\n")).not.toContain("internal error");
    expect((await fetch(`${fx.s.url}/healthz`)).status).toBe(200);
  });
});
