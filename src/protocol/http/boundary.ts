import type { ConnectError } from "@connectrpc/connect";
import type { Logger } from "../../log.js";
import { toConnectError } from "../errors.js";
import { errorResponse } from "../rest/error-body.js";
import { type HttpRequest, type HttpResponse, pathOf } from "./types.js";

type Handler = (req: HttpRequest, res: HttpResponse) => unknown;

/**
 * The one boundary every request passes: whatever a handler throws, or the promise it returns rejects with, becomes a
 * typed JSON error answer (the domain's own code, e.g. 400 invalid_argument naming the field; else 500 `internal`
 * with a request id that the log line carries) instead of an exception that would end the process.
 */
export function requestBoundary(handler: Handler, log: Logger): (req: HttpRequest, res: HttpResponse) => void {
  return (req, res) => {
    try {
      const out = handler(req, res);
      if (out !== null && typeof out === "object" && typeof (out as Promise<unknown>).then === "function")
        (out as Promise<unknown>).then(undefined, (e: unknown) => answerFailure(req, res, e, log));
    } catch (e) {
      answerFailure(req, res, e, log);
    }
  };
}

/** Answers a request whose handling failed with `e`; a response already begun is cut off (its status is sent). */
export function answerFailure(req: HttpRequest, res: HttpResponse, e: unknown, log: Logger): void {
  const err = toConnectError(e, log, { method: req.method, path: pathOf(req) });
  try {
    if (res.headersSent) {
      res.destroy?.();
      return;
    }
    const body = errorResponse(err, req.headers.authorization !== undefined);
    res.writeHead(body.status, { ...body.headers, ...headersOf(err) });
    res.end(body.body);
  } catch (writeError) {
    log.warn("could not answer a failed request", { error: (writeError as Error).message });
    res.destroy?.();
  }
}

function headersOf(err: ConnectError): Record<string, string> {
  const out: Record<string, string> = {};
  err.metadata.forEach((v, k) => {
    out[k] = v;
  });
  return out;
}
