import { randomUUID } from "node:crypto";
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { ErrorInfoSchema } from "../../gen/google/rpc/error_details_pb.js";
import { DomainError, type DomainErrorKind } from "../domain/errors.js";
import type { Logger } from "../log.js";

/** The domain of the ErrorInfo details this service attaches. */
export const ERROR_DOMAIN = "aiagent";

const CODE_OF: Record<DomainErrorKind, Code> = {
  invalid_argument: Code.InvalidArgument,
  unauthenticated: Code.Unauthenticated,
  permission_denied: Code.PermissionDenied,
  not_found: Code.NotFound,
  already_exists: Code.AlreadyExists,
  failed_precondition: Code.FailedPrecondition,
  resource_exhausted: Code.ResourceExhausted,
  unavailable: Code.Unavailable,
  internal: Code.Internal,
};

/** Connect's code → HTTP status mapping, kept here once (connect-es keeps its own table private). */
export const HTTP_STATUS: Record<Code, number> = {
  [Code.Canceled]: 499,
  [Code.Unknown]: 500,
  [Code.InvalidArgument]: 400,
  [Code.DeadlineExceeded]: 504,
  [Code.NotFound]: 404,
  [Code.AlreadyExists]: 409,
  [Code.PermissionDenied]: 403,
  [Code.ResourceExhausted]: 429,
  [Code.FailedPrecondition]: 400,
  [Code.Aborted]: 409,
  [Code.OutOfRange]: 400,
  [Code.Unimplemented]: 501,
  [Code.Internal]: 500,
  [Code.Unavailable]: 503,
  [Code.DataLoss]: 500,
  [Code.Unauthenticated]: 401,
};

/** Connect's snake_case name of a code, as written in error bodies. */
export function codeName(code: Code): string {
  return Code[code].replace(/([a-z])([A-Z])/g, "$1_$2").toLowerCase();
}

/**
 * Any thrown value as a ConnectError safe to send: domain errors keep their message, everything else becomes an
 * `internal` that says only its request id, which the log line of the cause carries (and `where` tells, if given).
 */
export function toConnectError(e: unknown, log?: Logger, where?: Record<string, unknown>): ConnectError {
  if (e instanceof ConnectError) return e;
  if (e instanceof DomainError) {
    const metadata: Record<string, string> = {};
    if (e.extra.field) metadata.field = e.extra.field;
    if (e.extra.retryAfterSeconds !== undefined) metadata.retry_after_seconds = String(e.extra.retryAfterSeconds);
    const reason = e.extra.reason ?? (e.extra.field ? "InvalidField" : e.kind.toUpperCase());
    // Also as a header, so Connect and gRPC clients see the delay without decoding the detail.
    const headers =
      e.extra.retryAfterSeconds !== undefined ? { "retry-after": String(e.extra.retryAfterSeconds) } : undefined;
    const err = new ConnectError(
      e.message,
      CODE_OF[e.kind],
      headers,
      [{ desc: ErrorInfoSchema, value: create(ErrorInfoSchema, { reason, domain: ERROR_DOMAIN, metadata }) }],
      e.extra.cause,
    );
    if (e.kind === "internal" || e.kind === "unavailable")
      log?.warn("request failed", { code: e.kind, message: e.message, cause: describe(e.extra.cause) });
    return err;
  }
  const requestId = randomUUID();
  log?.error("internal error", { request_id: requestId, ...where, cause: describe(e) });
  return new ConnectError(`internal error (request id ${requestId})`, Code.Internal, { "x-request-id": requestId });
}

function describe(e: unknown): unknown {
  if (e instanceof Error)
    return {
      name: e.name,
      message: e.message,
      code: (e as { code?: unknown }).code,
      stack: e.stack?.split("\n").slice(0, 6).join("\n"),
    };
  return e;
}

/** The `reason` of the ErrorInfo detail of an error, if any. */
export function errorReason(err: ConnectError): string | undefined {
  return err.findDetails(ErrorInfoSchema)[0]?.reason;
}

/** The retry delay an error asks for, in seconds. */
export function retryAfter(err: ConnectError): number | undefined {
  const v = err.findDetails(ErrorInfoSchema)[0]?.metadata.retry_after_seconds;
  return v === undefined ? undefined : Number(v);
}
