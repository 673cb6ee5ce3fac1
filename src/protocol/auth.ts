import { createHash } from "node:crypto";
import { decodeProtectedHeader } from "jose";
import type { AccountCaller, Caller, FrameCaller } from "../domain/conversation/conversation-service.js";
import { isDomainError, permissionDenied, unauthenticated } from "../domain/errors.js";
import { TOKEN_KINDS } from "../domain/token/jwt-strategy.js";
import type { TokenService } from "../domain/token/token-service.js";
import type { Call } from "./call.js";

/** Authentication shared by every protocol: handlers call these before any domain work. */
export class Authenticator {
  constructor(private readonly tokens: TokenService) {}

  /** Token endpoints are for servers: a request with a browser's markers is refused. */
  requireServer(call: Call): void {
    if (call.header("origin") !== undefined || call.header("sec-fetch-site") !== undefined) {
      throw permissionDenied(
        "token endpoints must be called from your server, never from a browser: keep client_api_key and refresh_token on the server",
      );
    }
  }

  /** The frame's caller, from the access token in the request field, the query parameter or the Authorization header. */
  async frame(call: Call, fieldToken = ""): Promise<FrameCaller> {
    const token = fieldToken || call.queryAccessToken || bearer(call);
    if (!token)
      throw challenge(
        call,
        unauthenticated("an access token is required (access_token query parameter or Authorization: Bearer)"),
      );
    const c = await presented(call, this.tokens.authenticateFrame(token));
    return { kind: "frame", accountId: c.accountId, chatbotId: c.chatbotId, userId: c.userId };
  }

  /** The account API's caller, from the ID token in the Authorization header. */
  async account(call: Call): Promise<AccountCaller> {
    const token = bearer(call);
    if (!token)
      throw challenge(
        call,
        unauthenticated("an ID token is required: Authorization: Bearer <idToken from /get_id_token>"),
      );
    const c = await presented(call, this.tokens.authenticateAccount(token));
    return { kind: "account", accountId: c.accountId, email: c.account.email };
  }

  /**
   * A watcher of a conversation, as `reader` decides, with what a long-lived stream needs of its token: when it
   * expires, and a key that tells its streams apart from other tokens' (a hash: the token is not kept).
   */
  async watcher(call: Call, fieldToken = ""): Promise<{ caller: Caller; expiresAt: number; tokenKey: string }> {
    const token = fieldToken || call.queryAccessToken || bearer(call);
    const caller = await this.reader(call, fieldToken);
    const tokenKey = createHash("sha256")
      .update(token ?? "")
      .digest("base64url");
    const claims =
      caller.kind === "frame"
        ? await this.tokens.authenticateFrame(token!)
        : await this.tokens.authenticateAccount(token!);
    return { caller, expiresAt: claims.expiresAt, tokenKey };
  }

  /** A reader of conversations: the frame (access token) or the account (ID token). */
  async reader(call: Call, fieldToken = ""): Promise<Caller> {
    if (fieldToken || call.queryAccessToken) return this.frame(call, fieldToken);
    const token = bearer(call);
    if (!token)
      throw challenge(call, unauthenticated("an access_token or an ID token (Authorization: Bearer) is required"));
    // The header only routes the token to its verifier, which checks the type again.
    return typ(token) === TOKEN_KINDS.access.typ ? this.frame(call) : this.account(call);
  }
}

// RFC 6750 §3: a 401 names the scheme; when a token was presented and refused, also `invalid_token`.
// The JSON routes write this header themselves; these reach the Connect and gRPC responses.
function challenge(call: Call, e: Error, invalidToken = false): Error {
  call.setResponseHeader("www-authenticate", invalidToken ? 'Bearer error="invalid_token"' : "Bearer");
  return e;
}

async function presented<T>(call: Call, check: Promise<T>): Promise<T> {
  try {
    return await check;
  } catch (e) {
    if (isDomainError(e) && e.kind === "unauthenticated") challenge(call, e, true);
    throw e;
  }
}

function bearer(call: Call): string | undefined {
  const h = call.header("authorization");
  if (!h) return undefined;
  const m = /^Bearer[ ]+(\S+)\s*$/i.exec(h);
  if (!m) throw challenge(call, unauthenticated("the Authorization header must be: Bearer <token>"), true);
  return m[1];
}

function typ(token: string): unknown {
  try {
    return decodeProtectedHeader(token).typ;
  } catch {
    return undefined;
  }
}
