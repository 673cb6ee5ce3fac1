import type { Schema, SchemaBuilder } from "./schemas.js";

/** Connect's error codes, as its error JSON spells them (connectrpc.com/docs/protocol#error-codes). */
const CODES = [
  "canceled",
  "unknown",
  "invalid_argument",
  "deadline_exceeded",
  "not_found",
  "already_exists",
  "permission_denied",
  "resource_exhausted",
  "failed_precondition",
  "aborted",
  "out_of_range",
  "unimplemented",
  "internal",
  "unavailable",
  "data_loss",
  "unauthenticated",
];

/** One error status a JSON route may answer. */
interface ErrorStatus {
  status: string;
  /** The Connect codes behind it (Connect's code → HTTP mapping). */
  codes: string[];
  description: string;
  headers?: Record<string, Schema>;
  /** Only routes that take a request body answer it. */
  bodyOnly?: boolean;
}

/** The status of already_exists: listed only for the methods that may answer it (see declared.ts conflictOf). */
const CONFLICT = "409";

/**
 * The error statuses the JSON routes answer: those of the handlers' Connect codes, and those of the HTTP layer in
 * front of them (wrong verb, body, URL or headers too large), which carry the same error JSON.
 */
const STATUSES: readonly ErrorStatus[] = [
  {
    status: "400",
    codes: ["invalid_argument", "failed_precondition", "out_of_range"],
    description: "Bad input: the message names the field. Nothing was changed.",
  },
  {
    status: "401",
    codes: ["unauthenticated"],
    description:
      "A credential is missing, malformed, expired or revoked. The ErrorInfo reason is TokenExpiredError for an expired token (refresh it) and TokenInvalidError otherwise.",
    headers: {
      "WWW-Authenticate": {
        description: 'Bearer, or Bearer error="invalid_token" when a token was presented.',
        schema: { type: "string" },
      },
    },
  },
  {
    status: "403",
    codes: ["permission_denied"],
    description:
      "The caller is known but may not do this (for example a token endpoint called from a browser, or another account's e-mail).",
  },
  {
    status: "404",
    codes: ["not_found"],
    description: "The object does not exist or is not the caller's; the two are never told apart.",
  },
  {
    status: "405",
    codes: ["unimplemented"],
    description: "The path exists, but not with this method; `Allow` names the one it takes.",
    headers: {
      Allow: { description: "The method this path takes.", schema: { type: "string" } },
    },
  },
  {
    status: CONFLICT,
    codes: ["already_exists", "aborted"],
    description:
      "Conflict: the name is taken, or the idempotency key was used for a different request. Nothing was changed.",
  },
  {
    status: "413",
    codes: ["resource_exhausted"],
    description:
      "The request body is over the size limit (64 KiB). Sending it again cannot help; over HTTP/1.1 the connection is closed.",
    bodyOnly: true,
  },
  {
    status: "414",
    codes: ["invalid_argument"],
    description: "The URL with its query is over the length limit (8 KiB by default).",
  },
  {
    status: "429",
    codes: ["resource_exhausted"],
    description: "Too many requests: wait as `Retry-After` says.",
    headers: {
      "Retry-After": { description: "Seconds to wait before trying again.", schema: { type: "integer", minimum: 0 } },
    },
  },
  {
    status: "431",
    codes: ["resource_exhausted"],
    description:
      "The request headers are over the size limit (16 KiB by default). Over HTTP/2 the body is the error JSON; over HTTP/1.1 it is empty.",
  },
  {
    status: "500",
    codes: ["internal", "unknown", "data_loss"],
    description: "An internal error; the body never carries internal details.",
  },
  {
    status: "503",
    codes: ["unavailable"],
    description: "Briefly unavailable (for example the database is busy); try again.",
    headers: {
      "Retry-After": { description: "Seconds to wait before trying again.", schema: { type: "integer", minimum: 0 } },
    },
  },
];

/** Component name of the error body schema. */
export const ERROR_SCHEMA = "connect.Error";

/**
 * google.rpc.ErrorInfo as the error body's `debug` shows it. The error details are part of the protocol, not of the
 * contract's files, so the plugin does not see their descriptor: the three fields are written out here.
 */
const ERROR_INFO: Schema = {
  type: "object",
  description: "Why the call failed, in machine-readable form (google.rpc.ErrorInfo).",
  required: ["reason", "domain", "metadata"],
  properties: {
    reason: {
      type: "string",
      description:
        "TokenExpiredError (an expired token: refresh it), TokenInvalidError (any other token failure), InvalidField (bad input), or the upper-case error kind.",
    },
    domain: { type: "string", description: "The service that raised the error: aiagent." },
    metadata: {
      type: "object",
      additionalProperties: { type: "string" },
      description: "`field` names the bad input; `retry_after_seconds` says when to try again.",
    },
  },
};

/**
 * Adds the Connect error JSON (`{code, message, details}`) to the components and returns the error responses
 * every operation refers to.
 */
export function errorComponents(schemas: SchemaBuilder): {
  responses: Record<string, Schema>;
  refs: Record<string, Schema>;
  bodyOnly: ReadonlySet<string>;
  conflictStatus: string;
} {
  schemas.components["google.rpc.ErrorInfo"] = ERROR_INFO;
  const debug: Schema = {
    $ref: "#/components/schemas/google.rpc.ErrorInfo",
    description: "The same detail as plain JSON; this service sends google.rpc.ErrorInfo details.",
  };
  schemas.components[ERROR_SCHEMA] = {
    type: "object",
    description:
      "The Connect error JSON. `code` is machine-readable; `message` is for people. A token failure carries a google.rpc.ErrorInfo detail whose `reason` is TokenExpiredError or TokenInvalidError; bad input names the field in `metadata.field`.",
    required: ["code", "message", "details"],
    properties: {
      code: { type: "string", enum: CODES, description: "The Connect error code." },
      message: { type: "string", description: "What went wrong, in words a person can act on." },
      details: {
        type: "array",
        items: {
          type: "object",
          required: ["type", "value"],
          properties: {
            type: {
              type: "string",
              description: "Fully-qualified protobuf type of the detail, e.g. google.rpc.ErrorInfo.",
            },
            value: {
              type: "string",
              contentEncoding: "base64",
              description: "The detail in protobuf binary, base64 without padding (Connect's wire form).",
            },
            debug,
          },
        },
      },
    },
  };
  const responses: Record<string, Schema> = {};
  const refs: Record<string, Schema> = {};
  for (const s of STATUSES) {
    const name = `Error${s.status}`;
    responses[name] = {
      description: `${s.description} Connect code: ${s.codes.join(", ")}.`,
      ...(s.headers ? { headers: s.headers } : {}),
      content: { "application/json": { schema: { $ref: `#/components/schemas/${ERROR_SCHEMA}` } } },
    };
    refs[s.status] = { $ref: `#/components/responses/${name}` };
  }
  return {
    responses,
    refs,
    bodyOnly: new Set(STATUSES.filter((s) => s.bodyOnly).map((s) => s.status)),
    conflictStatus: CONFLICT,
  };
}
