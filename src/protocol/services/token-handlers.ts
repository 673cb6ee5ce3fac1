import type { TokenService as TokenServiceDesc } from "../../../gen/aiagent/v1/token_service_pb.js";
import { LaunchRefusedError, type TokenService } from "../../domain/token/token-service.js";
import type { Logger } from "../../log.js";
import { callOrigin } from "../audited.js";
import type { Call, Handlers } from "../call.js";
import { EncodedAnswer } from "../encoded-answer.js";
import { limited, noTokenLimits, type TokenGuard } from "../token-limits.js";
import { refreshedJson, tokenSetJson } from "./token-json.js";

// Cache-Control: no-store is set for every method where every protocol passes (the transcoder, the Connect routes);
// token responses add the HTTP/1.0 Pragma that RFC 6749 asks of them.
function noStore(call: Call): void {
  call.setResponseHeader("pragma", "no-cache");
}

/**
 * The TokenService methods: each exchanges the credential in its body (the gate has already refused browsers where
 * the contract says server-only), rate-limited, never cached.
 */
export function tokenHandlers(
  tokens: TokenService,
  limits: TokenGuard = noTokenLimits,
  log?: Logger,
): Handlers<typeof TokenServiceDesc> {
  return {
    async getAccessToken(req, call) {
      const contact = req.contact && {
        contactName: req.contact.contactName,
        email: req.contact.email,
        phoneNumber: req.contact.phoneNumber,
      };
      const t = await limited(limits, call, { target: `chatbot:${req.chatbotId}`, apiKey: req.clientApiKey }, () =>
        tokens.access.getAccessToken({
          userId: req.userId,
          chatbotId: req.chatbotId,
          clientApiKey: req.clientApiKey,
          contact,
          launchCode: req.launchCode,
          embedOrigin: req.embedOrigin,
          userAgent: call.header("user-agent"),
        }),
      );
      noStore(call);
      if (call.encoder && !t.launchCode) return new EncodedAnswer(tokenSetJson(t));
      return {
        data: {
          accessToken: t.accessToken,
          refreshToken: t.refreshToken,
          accessTokenExpiresAt: BigInt(t.accessTokenExpiresAt),
          refreshTokenExpiresAt: BigInt(t.refreshTokenExpiresAt),
          ...(t.launchCode
            ? { launchCode: t.launchCode.code, launchCodeExpiresAt: BigInt(t.launchCode.expiresAt) }
            : {}),
        },
      };
    },
    async refreshToken(req, call) {
      const t = await limited(
        limits,
        call,
        { target: `chatbot:${req.chatbotId}`, apiKey: req.clientApiKey || undefined },
        () =>
          tokens.refreshes.refresh({
            userId: req.userId,
            chatbotId: req.chatbotId,
            refreshToken: req.refreshToken,
            clientApiKey: req.clientApiKey || undefined,
            userAgent: call.header("user-agent"),
          }),
      );
      noStore(call);
      if (call.encoder) return new EncodedAnswer(refreshedJson(t));
      return {
        data: {
          accessToken: t.accessToken,
          expiresAt: BigInt(t.expiresAt),
          ...(t.refreshToken
            ? { refreshToken: t.refreshToken.token, refreshTokenExpiresAt: BigInt(t.refreshToken.expiresAt) }
            : {}),
        },
      };
    },
    async getIdToken(req, call) {
      const apiKey = req.credential.case === "clientApiKey" ? req.credential.value : undefined;
      const password = req.credential.case === "password" ? req.credential.value : undefined;
      const t = await limited(
        limits,
        call,
        { target: `account:${req.userEmailId}`, apiKey, password: password !== undefined },
        () =>
          tokens.idTokens.getIdToken({
            email: req.userEmailId,
            clientApiKey: apiKey,
            password,
            origin: callOrigin(call),
          }),
      );
      noStore(call);
      return { data: { idToken: t.idToken, expiresAt: BigInt(t.expiresAt) } };
    },
    async exchangeLaunchCode(req, call) {
      const t = await limited(limits, call, { target: `chatbot:${req.chatbotId}` }, async () => {
        try {
          return await tokens.launchCodes.exchangeLaunchCode({
            chatbotId: req.chatbotId,
            launchCode: req.launchCode,
            embedOrigin: req.embedOrigin,
            userAgent: call.header("user-agent"),
          });
        } catch (e) {
          // A second use, an expired code, another origin: refused alike, and logged with why (never the code).
          if (e instanceof LaunchRefusedError)
            log?.warn("launch code refused", {
              why: e.why,
              chatbot_id: req.chatbotId,
              embed_origin: req.embedOrigin.slice(0, 200),
              peer: call.peer,
            });
          throw e;
        }
      });
      noStore(call);
      return { data: { accessToken: t.accessToken, expiresAt: BigInt(t.expiresAt), userId: t.userId } };
    },
  };
}
