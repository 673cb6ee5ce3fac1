import type { OutgoingHttpHeaders } from "node:http";
import type { HttpResponse } from "./http/types.js";

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
 * untouched, and only a 500 is ever buffered.
 */
export function parseErrorsAsInvalidArgument(res: HttpResponse): HttpResponse {
  const r = res as unknown as Patchable;
  const { writeHead, write, end } = r;
  r.writeHead = function (this: unknown, status: number, headers?: OutgoingHttpHeaders) {
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
              message: `the request is not a valid protobuf message (${err.message.slice(14)})`,
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
