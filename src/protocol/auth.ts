import { createHash } from "node:crypto";
import { decodeProtectedHeader } from "jose";
import { Credential, Role } from "../../gen/aiagent/v1/access_pb.js";
import type { AccountCaller, Caller, FrameCaller } from "../domain/caller.js";
import { roleAllows } from "../domain/caller.js";
import { isDomainError, permissionDenied, unauthenticated } from "../domain/errors.js";
import { type IdClaims, TOKEN_KINDS } from "../domain/token/jwt-strategy.js";
import type { TokenChecks } from "../domain/token/token-checks.js";
import type { AccessRule } from "./access.js";
import type { Authorized, Call } from "./call.js";
import { sameOriginRequest, sessionToken } from "./session-cookie.js";

const NEEDED_ROLE = { [Role.OPERATOR]: "operator", [Role.ADMIN]: "admin" } as const;

/**
 * Authentication shared by every protocol, driven by each RPC's declared access: the gate (access.ts) calls
 * `admit` before the handler runs, and no handler authenticates by itself.
 */
export class Authenticator {
  constructor(private readonly checks: TokenChecks) {}

  /**
   * Checks the request against the declared access and answers who is calling. `fields` are the request's
   * credential fields (`access_token`, `client_api_key`) where its message has them.
   */
  admit(rule: AccessRule, call: Call, fields: { accessToken?: string; clientApiKey?: string }): Promise<Authorized> {
    // Not an async function (every call with a credential comes here): the frame token's check is one reaction on
    // its read, not an await and an async function's promise around it. A throw is the promise's rejection.
    try {
      if (rule.serverOnly || (rule.credentials.has(Credential.API_KEY) && fields.clientApiKey))
        requireServer(call, rule);
      // A form or a page elsewhere must not sign anyone in or out of the console (login CSRF).
      if (rule.sameOrigin && !sameOriginRequest((n) => call.header(n)))
        throw permissionDenied("the console's session is opened and closed only by the console's own pages");
      const frame = rule.credentials.has(Credential.ACCESS_TOKEN);
      const account = rule.credentials.has(Credential.ID_TOKEN);
      // Credentials in the body (API key, refresh token, password, invitation) are what the RPC itself exchanges.
      if (!frame && !account)
        return Promise.resolve({ caller: undefined, expiresAt: Number.POSITIVE_INFINITY, tokenKey: "" });
      const fieldToken = frame ? fields.accessToken || call.queryAccessToken : undefined;
      // The console's session cookie stands in for the bearer ID token, on a same-origin call with the CSRF header.
      const token = fieldToken || bearer(call) || (account ? sessionToken(call) : undefined);
      if (!token) throw challenge(call, unauthenticated(missing(frame, account)));
      // A token in the header is routed to its verifier by its type, which the verifier checks again.
      const asFrame = frame && (!!fieldToken || !account || typ(token) === TOKEN_KINDS.access.typ);
      if (!asFrame) return this.admitAccount(rule, call, token);
      // The caller is made, and a refusal challenged, within the check's own reaction: none of this one's on it.
      return this.checks.authenticateFrame(
        token,
        (c) => {
          const caller: FrameCaller = {
            kind: "frame",
            accountId: c.accountId,
            chatbotId: c.chatbotId,
            userId: c.userId,
          };
          return authorized(caller, c.expiresAt, token);
        },
        (e) => refused(call, e),
      );
    } catch (e) {
      return Promise.reject(e);
    }
  }

  /** The ID token's caller, when its role is the one the RPC needs. */
  private async admitAccount(rule: AccessRule, call: Call, token: string): Promise<Authorized> {
    let c: IdClaims & { caller: AccountCaller };
    try {
      c = await this.checks.authenticateAccount(token);
    } catch (e) {
      throw refused(call, e);
    }
    const needed = rule.role === Role.ADMIN || rule.role === Role.OPERATOR ? NEEDED_ROLE[rule.role] : "admin";
    if (!roleAllows(c.caller.role, needed))
      throw permissionDenied(`this needs the ${needed} role; ${c.caller.email} is an ${c.caller.role}`);
    return authorized(c.caller, c.expiresAt, token, c);
  }
}

/** The gate's answer; the token's key (a hash) is computed only when a watch stream asks for it, off unary calls. */
function authorized(caller: Caller, expiresAt: number, token: string, idClaims?: IdClaims): Authorized {
  return new Admitted(caller, expiresAt, token, idClaims);
}

/**
 * A class rather than an object literal with a getter (which V8 keeps as a dictionary: about 0.5 KB, for each open
 * stream's whole life); the token itself is dropped once its key is made.
 */
class Admitted implements Authorized {
  private key: string | undefined;

  constructor(
    readonly caller: Caller,
    readonly expiresAt: number,
    private token: string | undefined,
    readonly idClaims: IdClaims | undefined,
  ) {}

  get tokenKey(): string {
    if (this.key === undefined) {
      this.key = createHash("sha256").update(this.token!).digest("base64url");
      this.token = undefined;
    }
    return this.key;
  }
}

/** The frame's caller of an RPC that accepts only the access token. */
export function frameCaller(a: Authorized): FrameCaller {
  if (a.caller?.kind !== "frame") throw new Error("declared access and handler disagree: no frame caller");
  return a.caller;
}

/** The account's caller of an RPC that accepts only the ID token. */
export function accountCaller(a: Authorized): AccountCaller {
  if (a.caller?.kind !== "account") throw new Error("declared access and handler disagree: no account caller");
  return a.caller;
}

/** The caller of an RPC that accepts a token of either kind. */
export function anyCaller(a: Authorized): Caller {
  if (!a.caller) throw new Error("declared access and handler disagree: no caller");
  return a.caller;
}

/** Credentials that must stay on a server: a request with a browser's markers is refused. */
function requireServer(call: Call, rule: AccessRule): void {
  if (call.header("origin") === undefined && call.header("sec-fetch-site") === undefined) return;
  throw permissionDenied(
    rule.credentials.has(Credential.API_KEY) && !rule.serverOnly
      ? "client_api_key must never be sent from a browser: keep it on your server"
      : "token endpoints must be called from your server, never from a browser: keep client_api_key and refresh_token on the server",
  );
}

function missing(frame: boolean, account: boolean): string {
  if (frame && account) return "an access_token or an ID token (Authorization: Bearer) is required";
  if (frame) return "an access token is required (access_token query parameter or Authorization: Bearer)";
  return "an ID token is required: Authorization: Bearer <idToken from /get_id_token>";
}

// RFC 6750 §3: a 401 names the scheme; when a token was presented and refused, also `invalid_token`.
// The JSON routes write this header themselves; these reach the Connect and gRPC responses.
function challenge(call: Call, e: Error, invalidToken = false): Error {
  call.setResponseHeader("www-authenticate", invalidToken ? 'Bearer error="invalid_token"' : "Bearer");
  return e;
}

/**
 * A presented token's check failed with `e`: a refused token is challenged (`invalid_token`). In the caller's own
 * try, not an async function around the check: each layer of promises is paid on every call.
 */
function refused(call: Call, e: unknown): unknown {
  if (isDomainError(e) && e.kind === "unauthenticated") challenge(call, e, true);
  return e;
}

/**
 * Authorization headers read lately and the token each carries, by the header's last characters (a token's
 * signature's), each entry holding the whole header: a console sends the same header on every call, and matching
 * the pattern against it (an ID token is some 600 characters) was 5% of a contact list page's instructions, as
 * hashing the whole header for a lookup would be. A hit is the same whole header; two that end alike only take each
 * other's place. Bounded (about 2 MB at most): emptied when full; a header longer than any token the verifier
 * accepts (4,096 characters) is not kept.
 */
const bearers = new Map<string, { header: string; token: string }>();
const BEARERS_KEPT = 512;

function bearer(call: Call): string | undefined {
  const h = call.header("authorization");
  if (!h) return undefined;
  const key = h.length > 22 ? h.slice(-22) : h;
  const known = bearers.get(key);
  if (known !== undefined && known.header === h) return known.token;
  const m = /^Bearer[ ]+(\S+)\s*$/i.exec(h);
  if (!m) throw challenge(call, unauthenticated("the Authorization header must be: Bearer <token>"), true);
  const token = m[1]!;
  if (h.length > 4200) return token;
  if (bearers.size >= BEARERS_KEPT) bearers.clear();
  bearers.set(key, { header: h, token });
  return token;
}

function typ(token: string): unknown {
  try {
    return decodeProtectedHeader(token).typ;
  } catch {
    return undefined;
  }
}
