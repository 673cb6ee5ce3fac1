import { decodeProtectedHeader } from "jose";
import type { AccountCaller, Caller, FrameCaller } from "../domain/conversation/conversation-service.js";
import { permissionDenied, unauthenticated } from "../domain/errors.js";
import type { TokenService } from "../domain/token/token-service.js";
import { TOKEN_KINDS } from "../domain/token/jwt-strategy.js";
import type { Call } from "./call.js";

/** Authentication shared by every protocol: handlers call these before any domain work. */
export class Authenticator {
  constructor(private readonly tokens: TokenService) {}

  /** Token endpoints are for servers: a request with a browser's markers is refused. */
  requireServer(call: Call): void {
    if (call.header("origin") !== undefined || call.header("sec-fetch-site") !== undefined) {
      throw permissionDenied("token endpoints must be called from your server, never from a browser: keep client_api_key and refresh_token on the server");
    }
  }

  /** The frame's caller, from the access token in the request field, the query parameter or the Authorization header. */
  async frame(call: Call, fieldToken = ""): Promise<FrameCaller> {
    const token = fieldToken || call.queryAccessToken || bearer(call);
    if (!token) throw unauthenticated("an access token is required (access_token query parameter or Authorization: Bearer)");
    const c = await this.tokens.authenticateFrame(token);
    return { kind: "frame", accountId: c.accountId, chatbotId: c.chatbotId, userId: c.userId };
  }

  /** The account API's caller, from the ID token in the Authorization header. */
  async account(call: Call): Promise<AccountCaller> {
    const token = bearer(call);
    if (!token) throw unauthenticated("an ID token is required: Authorization: Bearer <idToken from /get_id_token>");
    const c = await this.tokens.authenticateAccount(token);
    return { kind: "account", accountId: c.accountId, email: c.account.email };
  }

  /** A reader of conversations: the frame (access token) or the account (ID token). */
  async reader(call: Call, fieldToken = ""): Promise<Caller> {
    if (fieldToken || call.queryAccessToken) return this.frame(call, fieldToken);
    const token = bearer(call);
    if (!token) throw unauthenticated("an access_token or an ID token (Authorization: Bearer) is required");
    // The header only routes the token to its verifier, which checks the type again.
    return typ(token) === TOKEN_KINDS.access.typ ? this.frame(call) : this.account(call);
  }
}

function bearer(call: Call): string | undefined {
  const h = call.header("authorization");
  if (!h) return undefined;
  const m = /^Bearer[ ]+(\S+)\s*$/i.exec(h);
  if (!m) throw unauthenticated("the Authorization header must be: Bearer <token>");
  return m[1];
}

function typ(token: string): unknown {
  try {
    return decodeProtectedHeader(token).typ;
  } catch {
    return undefined;
  }
}
