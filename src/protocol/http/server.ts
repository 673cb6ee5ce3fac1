import { createServer as createHttp1, type Server as Http1Server } from "node:http";
import { createServer as createHttp2, type Http2Server, type Http2Session, constants as h2c } from "node:http2";
import type { AddressInfo } from "node:net";
import { createServer as createNet, type Server as NetServer, type Socket } from "node:net";
import type { HttpLimits } from "../../config.js";
import { createLogger, type Logger } from "../../log.js";
import { requestBoundary } from "./boundary.js";
import type { HttpRequest, HttpResponse, Route } from "./types.js";
import { sendJson } from "./types.js";

/** Limits of the HTTP server (see HttpLimits in config.ts for what each means). */
export type ServerLimits = HttpLimits;

export const DEFAULT_LIMITS: ServerLimits = {
  maxHeaderBytes: 16 * 1024,
  maxUrlLength: 8 * 1024,
  requestTimeoutMs: 30_000,
  idleTimeoutMs: 5_000,
  h2IdleTimeoutMs: 60_000,
};

/** Tries each route in turn; the last answers 404. */
export function chain(
  routes: Route[],
  limits: ServerLimits = DEFAULT_LIMITS,
): (req: HttpRequest, res: HttpResponse) => unknown {
  return (req, res) => {
    if ((req.url?.length ?? 0) > limits.maxUrlLength) {
      sendJson(res, 414, {
        code: "invalid_argument",
        message: `url: must be at most ${limits.maxUrlLength} characters`,
        details: [],
      });
      return;
    }
    for (const r of routes) {
      // A route's promise goes back to the request boundary, which answers its rejection.
      const served = r(req, res);
      if (served) return served;
    }
    sendJson(res, 404, {
      code: "not_found",
      message: `no route for ${req.method} ${(req.url ?? "").split("?")[0]}`,
      details: [],
    });
  };
}

/** A listening server: HTTP/1.1 and cleartext HTTP/2 on one port. */
export interface RunningServer {
  readonly port: number;
  readonly url: string;
  /** Stops accepting, lets in-flight requests finish (up to graceMs), then closes every connection. */
  close(graceMs?: number): Promise<void>;
}

/** The size of a header list as HTTP/2 counts it (RFC 9113 §6.5.2: name + value + 32 per field). */
function headerListSize(raw: string[]): number {
  let n = 0;
  for (const field of raw) n += field.length;
  return n + 16 * raw.length;
}

const PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");

/**
 * Listens on one port for both HTTP/1.1 and cleartext HTTP/2 (gRPC needs the latter): node:http2's
 * cleartext server has no HTTP/1.1 fallback, so the first bytes of each connection pick the server.
 */
export async function listen(
  unguarded: (req: HttpRequest, res: HttpResponse) => unknown,
  port: number,
  host: string,
  limits: ServerLimits = DEFAULT_LIMITS,
  /** Paths of streams that may rightly stay silent (watch streams): no silence timeout, and their session stays. */
  quietPath: (path: string) => boolean = () => false,
  /** Where a request that failed in a way no handler answered is logged, with the request id its 500 carries. */
  log: Logger = createLogger("warn"),
): Promise<RunningServer> {
  // Every request of both HTTP versions enters through this one boundary: no request can end the process.
  const handler = requestBoundary(unguarded, log);
  const h1: Http1Server = createHttp1(
    {
      maxHeaderSize: limits.maxHeaderBytes,
      requestTimeout: limits.requestTimeoutMs,
      headersTimeout: Math.min(limits.requestTimeoutMs, 10_000),
      // Node checks the two timeouts above only this often (30 s by default), which would let a slow client linger.
      connectionsCheckingInterval: Math.min(1000, limits.requestTimeoutMs),
      keepAliveTimeout: limits.idleTimeoutMs,
    },
    handler,
  );
  h1.maxHeadersCount = 100;
  // This server never listens itself (sockets are handed to it), and Node starts the request-timeout checks and
  // the connection tracking that closeIdleConnections needs only on "listening".
  h1.emit("listening");
  const h2: Http2Server = createHttp2(
    {
      maxSessionMemory: 32,
      maxHeaderListPairs: 100,
      settings: { maxHeaderListSize: limits.maxHeaderBytes, maxConcurrentStreams: 100 },
    },
    (req, res) => {
      // Node advertises maxHeaderListSize to HTTP/2 clients but does not refuse larger header lists: do it here.
      if (headerListSize(req.rawHeaders) > limits.maxHeaderBytes) {
        res.writeHead(431, { "content-type": "application/json" });
        res.end(
          JSON.stringify({
            code: "resource_exhausted",
            message: `headers: must be at most ${limits.maxHeaderBytes} bytes`,
            details: [],
          }),
        );
        return;
      }
      handler(req, res);
    },
  );
  // An HTTP/2 connection with no traffic at all is closed (Node destroys the session on its timeout).
  h2.setTimeout(limits.h2IdleTimeoutMs);
  const sessions = new Set<Http2Session>();
  h2.on("session", (session) => {
    sessions.add(session);
    session.once("close", () => sessions.delete(session));
  });
  // HTTP/2 has no per-request timeout of its own: a stream silent for requestTimeoutMs is cancelled (a slow client
  // holds no stream).
  // A watch stream is silent while nothing happens: it is exempt, and its session is not idle while it is open.
  const quietStreams = new WeakMap<Http2Session, number>();
  h2.on("stream", (stream, headers) => {
    const path = String(headers[":path"] ?? "").split("?")[0]!;
    if (!quietPath(path)) {
      stream.setTimeout(limits.requestTimeoutMs, () => stream.close(h2c.NGHTTP2_CANCEL));
      return;
    }
    const session = stream.session;
    if (!session) return;
    const n = quietStreams.get(session) ?? 0;
    quietStreams.set(session, n + 1);
    if (n === 0) session.setTimeout(0);
    stream.once("close", () => {
      const left = (quietStreams.get(session) ?? 1) - 1;
      quietStreams.set(session, left);
      if (left === 0 && !session.destroyed) session.setTimeout(limits.h2IdleTimeoutMs);
    });
  });
  const sockets = new Set<Socket>();
  const net: NetServer = createNet({ pauseOnConnect: true }, (socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
    // A connection reset before its first bytes picked a server would be an unhandled 'error' event (the process ends).
    socket.on("error", () => socket.destroy());
    socket.once("readable", function pick() {
      const head: Buffer | null = socket.read();
      if (head === null) {
        socket.once("readable", pick);
        return;
      }
      socket.unshift(head);
      const isH2 =
        head.length >= 3
          ? head
              .subarray(0, Math.min(head.length, PREFACE.length))
              .equals(PREFACE.subarray(0, Math.min(head.length, PREFACE.length)))
          : false;
      // HTTP/2 takes the socket's handle and first drains what was put back; HTTP/1.1 reads it as a stream.
      if (isH2) h2.emit("connection", socket);
      else {
        h1.emit("connection", socket);
        socket.resume();
      }
    });
  });
  await new Promise<void>((resolve, reject) => {
    net.once("error", reject);
    net.listen(port, host, () => resolve());
  });
  const addr = net.address() as AddressInfo;
  const shownHost = addr.family === "IPv6" ? `[${addr.address}]` : addr.address;
  return {
    port: addr.port,
    url: `http://${shownHost}:${addr.port}`,
    close: (graceMs = 10_000) =>
      new Promise<void>((resolve) => {
        net.close(() => resolve());
        h1.close();
        h2.close();
        // GOAWAY: HTTP/2 clients open no new streams here; the streams in flight finish.
        for (const session of sessions) session.close();
        // Idle keep-alive connections go now; busy ones get the grace period to finish.
        h1.closeIdleConnections();
        const timer = setTimeout(() => {
          for (const s of sockets) s.destroy();
        }, graceMs);
        timer.unref();
        const poll = setInterval(() => {
          h1.closeIdleConnections();
          if (sockets.size === 0) {
            clearInterval(poll);
            clearTimeout(timer);
          }
        }, 50);
        poll.unref();
      }),
  };
}
