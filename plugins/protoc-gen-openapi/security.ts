import { type DescExtension, type DescMethod, getOption, hasOption } from "@bufbuild/protobuf";
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

// The numbers of aiagent.v1.Credential (access.proto); the plugin reads the option from the registry, not gen/.
const ACCESS_TOKEN = 5;
const ID_TOKEN = 6;

/**
 * Which credentials a method accepts, read from its declared `(aiagent.v1.access)` option — the declaration the
 * server enforces: the access token (query parameter or bearer header) and/or the ID token (bearer header);
 * nothing for methods that exchange a credential in their body, or are public.
 */
export function securityOf(method: DescMethod, access: DescExtension | undefined): Record<string, string[]>[] {
  if (!access || !hasOption(method, access))
    throw new Error(`${method.parent.typeName}.${method.name} declares no (aiagent.v1.access)`);
  const declared = getOption(method, access) as unknown as { credentials: number[] };
  const out: Record<string, string[]>[] = [];
  if (declared.credentials.includes(ACCESS_TOKEN)) out.push({ accessToken: [] }, { accessTokenBearer: [] });
  if (declared.credentials.includes(ID_TOKEN)) out.push({ idToken: [] });
  return out;
}
