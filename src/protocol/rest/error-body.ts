import { create, toBinary } from "@bufbuild/protobuf";
import type { ConnectError } from "@connectrpc/connect";
import { codeName, HTTP_STATUS, retryAfter } from "../errors.js";
import { toDocumentedJson } from "./json-codec.js";

/** The HTTP status, headers and Connect error JSON body of an error on a JSON route. */
export function errorResponse(
  err: ConnectError,
  presentedToken: boolean,
): { status: number; headers: Record<string, string>; body: string } {
  const details = err.details.map((d) => {
    if ("desc" in d) {
      const msg = create(d.desc, d.value);
      // `value` is the protobuf encoding (Connect's wire form); `debug` shows the same detail as plain JSON.
      return {
        type: d.desc.typeName,
        value: Buffer.from(toBinary(d.desc, msg)).toString("base64").replace(/=+$/, ""),
        debug: toDocumentedJson(d.desc, msg),
      };
    }
    return { type: d.type, value: Buffer.from(d.value).toString("base64").replace(/=+$/, "") };
  });
  const status = HTTP_STATUS[err.code] ?? 500;
  const headers: Record<string, string> = { "content-type": "application/json", "cache-control": "no-store" };
  if (status === 401) headers["www-authenticate"] = presentedToken ? 'Bearer error="invalid_token"' : "Bearer";
  const ra = retryAfter(err);
  if (ra !== undefined || status === 429 || status === 503) headers["retry-after"] = String(ra ?? 1);
  return { status, headers, body: JSON.stringify({ code: codeName(err.code), message: err.rawMessage, details }) };
}
