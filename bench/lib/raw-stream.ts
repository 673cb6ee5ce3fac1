import { connect, type Socket } from "node:net";

/**
 * One lean streamed GET over its own HTTP/1.1 connection: a raw socket, no HTTP client library, no browser. It reads
 * the status line, then hands each line of the body that starts with "{" (the NDJSON lines; the chunk sizes of the
 * chunked encoding sit on lines of their own and are skipped) to `onLine` with the time it arrived.
 */
export class RawStream {
  status = 0;
  /** When the response's headers arrived (ms, performance.now()). */
  headersAt = 0;
  /** When the connection ended (ms), 0 while open. */
  endedAt = 0;
  /** Lines received, heartbeats among them. */
  lines = 0;
  beats = 0;
  /** The last line, once the stream ended: its error line when it ended with one. */
  last = "";
  private buf = "";
  private headersDone = false;
  private readonly socket: Socket;

  constructor(
    port: number,
    path: string,
    private readonly onLine: (s: RawStream, line: string, at: number) => void = () => undefined,
    private readonly onEnd: (s: RawStream) => void = () => undefined,
  ) {
    this.socket = connect({ port, host: "127.0.0.1", noDelay: true });
    this.socket.setEncoding("utf8");
    this.socket.write(`GET ${path} HTTP/1.1\r\nhost: 127.0.0.1\r\naccept: application/x-ndjson\r\n\r\n`);
    this.socket.on("data", (d: string) => this.data(d));
    const end = () => {
      if (this.endedAt) return;
      this.endedAt = performance.now();
      this.onEnd(this);
    };
    this.socket.on("end", end);
    this.socket.on("close", end);
    this.socket.on("error", end);
  }

  /** Resolves once the headers arrived (with the status), or the connection ended before them. */
  headers(timeoutMs = 60_000): Promise<number> {
    if (this.headersDone || this.endedAt) return Promise.resolve(this.status);
    return new Promise((resolve) => {
      const t = setTimeout(() => resolve(0), timeoutMs);
      const check = () => {
        if (this.headersDone || this.endedAt) {
          clearTimeout(t);
          this.socket.off("data", check);
          this.socket.off("close", check);
          resolve(this.status);
        }
      };
      this.socket.on("data", check);
      this.socket.on("close", check);
    });
  }

  close(): void {
    this.socket.destroy();
  }

  private data(d: string): void {
    const at = performance.now();
    this.buf += d;
    if (!this.headersDone) {
      const end = this.buf.indexOf("\r\n\r\n");
      if (end < 0) return;
      this.status = Number(this.buf.slice(9, 12));
      this.headersAt = at;
      this.headersDone = true;
      this.buf = this.buf.slice(end + 4);
    }
    let nl = this.buf.indexOf("\n");
    while (nl >= 0) {
      const line = this.buf.slice(0, nl);
      this.buf = this.buf.slice(nl + 1);
      // The chunked body's last chunk: the stream ended (the connection may stay open for another request).
      if (line === "0\r" && !this.endedAt) {
        this.endedAt = at;
        this.onEnd(this);
      } else if (line.charCodeAt(0) === 123 /* { */) {
        this.lines++;
        if (line.startsWith('{"result":{"cursor"')) this.beats++;
        this.last = line;
        this.onLine(this, line, at);
      }
      nl = this.buf.indexOf("\n");
    }
  }
}

/** What opening many streams gave: every stream (in `paths`' order), and those that got no 200, with the first. */
export interface Opened {
  streams: RawStream[];
  failed: number;
  firstFailure: string;
  /** Milliseconds from each request to its headers (the streams that opened). */
  headerMs: number[];
}

/**
 * Opens `paths` as raw streams, at most `concurrency` being opened at once; resolves when each has its headers or
 * has failed (no answer within `timeoutMs`, the connection closed, a status other than 200).
 */
export async function openAll(
  /** The port, or each stream's (by its index in `paths`): streams spread over instances. */
  port: number | ((i: number) => number),
  paths: string[],
  concurrency: number,
  onLine?: (s: RawStream, line: string, at: number) => void,
  onEnd?: (s: RawStream) => void,
  timeoutMs = 60_000,
): Promise<Opened> {
  const out: Opened = { streams: new Array(paths.length), failed: 0, firstFailure: "", headerMs: [] };
  let next = 0;
  const worker = async () => {
    while (next < paths.length) {
      const i = next++;
      const asked = performance.now();
      const s = new RawStream(typeof port === "number" ? port : port(i), paths[i]!, onLine, onEnd);
      out.streams[i] = s;
      const status = await s.headers(timeoutMs);
      if (status === 200) out.headerMs.push(s.headersAt - asked);
      else {
        out.failed++;
        out.firstFailure ||=
          `stream ${i}: ${status ? `status ${status}` : s.endedAt ? "closed before any answer" : `no answer within ${timeoutMs} ms`} ${s.last}`.trim();
        s.close();
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return out;
}
