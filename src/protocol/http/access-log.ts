import type { Logger } from "../../log.js";
import type { HttpRequest, HttpResponse } from "./types.js";

/**
 * Logs each request at debug level (method, path with query, status, duration, client address); the logger
 * redacts the frame's `access_token` query parameter and every other secret. Off at the default level, so the
 * hot path pays one level check.
 */
export function withAccessLog(
  handler: (req: HttpRequest, res: HttpResponse) => unknown,
  log: Logger,
  enabled: boolean,
): (req: HttpRequest, res: HttpResponse) => unknown {
  if (!enabled) return handler;
  return (req, res) => {
    const start = process.hrtime.bigint();
    res.once("finish", () => {
      log.debug("request", {
        method: req.method,
        url: req.url,
        status: res.statusCode,
        ms: Number(process.hrtime.bigint() - start) / 1e6,
        peer: req.socket?.remoteAddress,
        http: req.httpVersion,
      });
    });
    return handler(req, res);
  };
}
