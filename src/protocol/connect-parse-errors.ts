import type { OutgoingHttpHeaders } from "node:http";
import { base64Decode } from "@bufbuild/protobuf/wire";
import { type HttpRequest, type HttpResponse, type Route, sendJson } from "./http/types.js";

/**
 * The route of the Connect, gRPC and gRPC-Web protocols: refuses a Connect GET whose `message` is not base64
 * (connect-es answers it 500) and hands every other request to connect-es, with its parse errors answered as the
 * client's.
 */
export function connectRoute(connect: (req: HttpRequest, res: HttpResponse) => void): Route {
  return (req, res) => {
    if (req.method === "GET" && badGetMessage(req.url ?? "")) {
      sendJson(
        res,
        400,
        { code: "invalid_argument", message: "message: is not valid base64", details: [] },
        { "cache-control": "no-store" },
      );
      return true;
    }
    connect(req, parseErrorsAsInvalidArgument(res));
    return true;
  };
}

/** Whether a Connect GET says its message is base64 (base64=1) and it is not. */
function badGetMessage(url: string): boolean {
  const q = url.indexOf("?");
  if (q < 0) return false;
  const params = new URLSearchParams(url.slice(q + 1));
  if (params.get("base64") !== "1") return false;
  try {
    base64Decode(params.get("message") ?? "");
    return false;
  } catch {
    return true;
  }
}

const GRPC_INTERNAL = "13";
const GRPC_INVALID_ARGUMENT = "3";
const PARSE_FAILURE = /^parse(%20| )binary/;

/** gRPC and gRPC-Web status headers (or trailers) of a parse failure, rewritten to invalid_argument. */
function grpcStatusFixed(h: OutgoingHttpHeaders | undefined): OutgoingHttpHeaders | undefined {
  if (!h || String(h["grpc-status"]) !== GRPC_INTERNAL || !PARSE_FAILURE.test(String(h["grpc-message"] ?? "")))
    return h;
  return { ...h, "grpc-status": GRPC_INVALID_ARGUMENT };
}

/** A gRPC-Web trailer frame (flag 0x80) of a parse failure, rewritten to invalid_argument; any other chunk as it is. */
function grpcWebTrailerFixed(chunk: unknown): unknown {
  if (!(chunk instanceof Uint8Array) || chunk.length < 5 || (chunk[0]! & 0x80) === 0) return chunk;
  const text = Buffer.from(chunk.subarray(5)).toString("latin1");
  if (!/^grpc-status: ?13\r?$/m.test(text) || !/^grpc-message: ?parse(%20| )binary/m.test(text)) return chunk;
  const body = Buffer.from(
    text.replace(/^grpc-status: ?13(\r?)$/m, `grpc-status: ${GRPC_INVALID_ARGUMENT}$1`),
    "latin1",
  );
  const head = Buffer.alloc(5);
  head.writeUInt8(chunk[0]!, 0);
  head.writeUInt32BE(body.length, 1);
  return Buffer.concat([head, body]);
}

/**
 * A Connect end-of-stream message (flag 0x02) of a parse failure, rewritten to invalid_argument; any other chunk as it
 * is.
 */
function connectEndStreamFixed(chunk: unknown): unknown {
  if (!(chunk instanceof Uint8Array) || chunk.length < 5 || (chunk[0]! & 0x02) === 0) return chunk;
  try {
    const end = JSON.parse(Buffer.from(chunk.subarray(5)).toString("utf8")) as {
      error?: { code?: string; message?: string };
    };
    if (end.error?.code !== "internal" || !end.error.message?.startsWith("parse binary:")) return chunk;
    end.error = { code: "invalid_argument", message: invalidMessage(end.error.message) };
    const body = Buffer.from(JSON.stringify(end));
    const head = Buffer.alloc(5);
    head.writeUInt8(chunk[0]!, 0);
    head.writeUInt32BE(body.length, 1);
    return Buffer.concat([head, body]);
  } catch {
    return chunk;
  }
}

function invalidMessage(parseMessage: string): string {
  return `the request is not a valid protobuf message (${parseMessage.slice(14)})`;
}

/**
 * Patches a streamed response (gRPC, gRPC-Web, a Connect stream) so that a parse failure says invalid_argument, not
 * internal.
 */
function streamParseErrorsAsInvalidArgument(
  r: Patchable & { addTrailers?(h: OutgoingHttpHeaders): void },
  fix: (chunk: unknown) => unknown,
): void {
  const { write, end, addTrailers } = r;
  r.write = function (this: unknown, chunk, encodingOrCallback, callback) {
    return write.call(this, fix(chunk), encodingOrCallback, callback);
  };
  r.end = function (this: unknown, ...args: unknown[]) {
    if (args.length > 0 && typeof args[0] !== "function") args[0] = fix(args[0]);
    return end.apply(this, args);
  };
  if (addTrailers)
    r.addTrailers = function (this: unknown, h: OutgoingHttpHeaders) {
      return addTrailers.call(this, grpcStatusFixed(h) ?? h);
    };
}

type Write = (chunk: unknown, encodingOrCallback?: unknown, callback?: unknown) => boolean;
interface Patchable {
  writeHead(status: number, headers?: OutgoingHttpHeaders): unknown;
  write: Write;
  end(...args: unknown[]): unknown;
}

/**
 * connect-es answers a malformed binary request body with `internal` (HTTP 500), while the same mistake in JSON
 * gets `invalid_argument` (400): a client's garbage would page the operator. This rewrites exactly that answer
 * (a unary error whose message starts "parse binary:") to invalid_argument; every other response passes through
 * untouched, and only a 500 is ever buffered. gRPC and gRPC-Web answer the same failure with status 13 (internal) in
 * their headers, trailers or trailer frame: that status becomes 3 (invalid_argument) without buffering anything.
 */
export function parseErrorsAsInvalidArgument(res: HttpResponse): HttpResponse {
  const r = res as unknown as Patchable;
  const { writeHead, write, end } = r;
  r.writeHead = function (this: unknown, status: number, headers?: OutgoingHttpHeaders) {
    const type = String(headers?.["content-type"] ?? "");
    if (type.startsWith("application/grpc") || type.startsWith("application/connect+")) {
      r.writeHead = writeHead;
      const grpc = type.startsWith("application/grpc");
      streamParseErrorsAsInvalidArgument(r, grpc ? grpcWebTrailerFixed : connectEndStreamFixed);
      return writeHead.call(this, status, grpc ? grpcStatusFixed(headers) : headers);
    }
    if (status !== 500) {
      r.writeHead = writeHead;
      return writeHead.call(this, status, headers);
    }
    const chunks: Buffer[] = [];
    r.writeHead = () => res;
    r.write = (chunk, encodingOrCallback, callback) => {
      chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array | string));
      const cb = typeof encodingOrCallback === "function" ? encodingOrCallback : callback;
      if (typeof cb === "function") queueMicrotask(() => (cb as (e?: Error) => void)());
      return true;
    };
    r.end = function (this: unknown, ...args: unknown[]) {
      Object.assign(r, { writeHead, write, end });
      if (args[0] !== undefined && typeof args[0] !== "function")
        chunks.push(Buffer.from(args[0] as Uint8Array | string));
      let body = Buffer.concat(chunks);
      let out = status;
      const h: OutgoingHttpHeaders = { ...headers };
      try {
        const err = JSON.parse(body.toString("utf8")) as { code?: string; message?: string };
        if (err.code === "internal" && err.message?.startsWith("parse binary:")) {
          out = 400;
          body = Buffer.from(
            JSON.stringify({
              code: "invalid_argument",
              message: invalidMessage(err.message),
            }),
          );
          h["content-length"] = String(body.length);
        }
      } catch {
        /* not a Connect error body: leave it as it was */
      }
      writeHead.call(this, out, h);
      const callback = args.find((x) => typeof x === "function");
      return callback ? end.call(this, body, callback) : end.call(this, body);
    };
    return res;
  };
  return res;
}
