import type { DescMethod } from "@bufbuild/protobuf";
import { commentOf } from "./comments.js";
import type { Schema } from "./schemas.js";

/** The ways a JSON route authenticates, as OpenAPI security schemes. */
export const SECURITY_SCHEMES: Record<string, Schema> = {
  idToken: {
    type: "http",
    scheme: "bearer",
    bearerFormat: "JWT",
    description:
      "The account's ID token: `data.idToken` of POST /get_id_token, sent as `Authorization: Bearer <idToken>`.",
  },
  accessToken: {
    type: "apiKey",
    in: "query",
    name: "access_token",
    description:
      "The frame's access token (`data.access_token` of POST /ai_agent/get_access_token or /ai_agent/refresh_token) as the `access_token` query parameter.",
  },
  accessTokenBearer: {
    type: "http",
    scheme: "bearer",
    bearerFormat: "JWT",
    description:
      "The frame's access token sent as `Authorization: Bearer <access_token>` instead of the query parameter.",
  },
};

/** Fields that carry a credential in the body: their methods need no other authentication. */
const BODY_CREDENTIALS = new Set(["client_api_key", "refresh_token", "password", "launch_code"]);

/**
 * Which credentials a method accepts, read from the contract: a credential field in the request means the body
 * authenticates; an `access_token` field or a comment about the frame means the access token (and, where the
 * field's comment says "ID token", the ID token as well); everything else is the account API (ID token).
 */
export function securityOf(method: DescMethod): Record<string, string[]>[] {
  const input = method.input;
  if (input.fields.some((f) => BODY_CREDENTIALS.has(f.name))) return [];
  const frame: Record<string, string[]>[] = [{ accessToken: [] }, { accessTokenBearer: [] }];
  const tokenField = input.fields.find((f) => f.name === "access_token");
  if (tokenField) return /\bID token\b/.test(commentOf(tokenField)) ? [...frame, { idToken: [] }] : frame;
  if (/\bframe\b/i.test(`${commentOf(method)} ${commentOf(input)}`)) return frame;
  return [{ idToken: [] }];
}
