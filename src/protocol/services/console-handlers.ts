import type { ConsoleService as ConsoleServiceDesc } from "../../../gen/aiagent/v1/console_service_pb.js";
import type { Clock } from "../../domain/clock.js";
import { invalidArgument } from "../../domain/errors.js";
import type { TokenService } from "../../domain/token/token-service.js";
import { callOrigin } from "../audited.js";
import { accountCaller } from "../auth.js";
import type { Handlers } from "../call.js";
import { cookieValue, SESSION_COOKIE, sessionCookie } from "../session-cookie.js";
import { limited, type TokenGuard } from "../token-limits.js";

/** What the console's session RPCs use. */
export interface ConsoleHandlerDeps {
  tokens: TokenService;
  /** The token routes' abuse limits: a console sign-in counts against the same ones as get_id_token's. */
  limits: TokenGuard;
  clock: Clock;
  /** The cookie is marked Secure when the service's public address is HTTPS. */
  secureCookie: () => boolean;
}

/**
 * The ConsoleService methods. The gate has already checked that the call comes from the console's own pages
 * (same_origin) and, for the preview, that the caller is an admin; the session travels only in Set-Cookie.
 */
export function consoleHandlers(d: ConsoleHandlerDeps): Handlers<typeof ConsoleServiceDesc> {
  const cookie = (token: string, maxAge: number) => sessionCookie(token, maxAge, d.secureCookie());
  return {
    async signIn(req, call) {
      const email = req.email.trim();
      if (!email) throw invalidArgument("email", "is required");
      if (!req.password) throw invalidArgument("password", "is required");
      const t = await limited(d.limits, call, { target: `account:${email}`, password: true }, () =>
        d.tokens.idTokens.getIdToken({ email, password: req.password, origin: callOrigin(call) }),
      );
      call.setResponseHeader(
        "set-cookie",
        cookie(t.idToken, Math.max(0, Math.floor((t.expiresAt - d.clock.now()) / 1000))),
      );
      return {};
    },
    async signOut(_req, call) {
      // Signing out revokes the cookie's token itself: a copy of it (as a cookie or a bearer token) is refused too.
      const token = cookieValue(call.header("cookie"), SESSION_COOKIE);
      if (token) await d.tokens.revocations.signOut(token);
      call.setResponseHeader("set-cookie", cookie("", 0));
      return {};
    },
    async openPreview(req, call) {
      const caller = accountCaller(call.auth);
      const t = await d.tokens.access.previewAccessToken({
        accountId: caller.accountId,
        chatbotId: req.chatbotId,
        userId: `console-preview:${caller.email}`,
      });
      return {
        data: {
          accessToken: t.accessToken,
          expiresAt: BigInt(t.expiresAt),
          framePath: `/console/preview/${req.chatbotId}?access_token=${encodeURIComponent(t.accessToken)}`,
        },
      };
    },
  };
}
