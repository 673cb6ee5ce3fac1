import type { TokenService as TokenServiceDesc } from "../../../gen/aiagent/v1/token_service_pb.js";
import type { TokenService } from "../../domain/token/token-service.js";
import type { Authenticator } from "../auth.js";
import type { Call, Handlers } from "../call.js";

function noStore(call: Call): void {
  call.setResponseHeader("cache-control", "no-store");
  call.setResponseHeader("pragma", "no-cache");
}

/** The TokenService methods: server-only, never cached. */
export function tokenHandlers(tokens: TokenService, auth: Authenticator): Handlers<typeof TokenServiceDesc> {
  return {
    async getAccessToken(req, call) {
      auth.requireServer(call);
      const contact = req.contact && { contactName: req.contact.contactName, email: req.contact.email, phoneNumber: req.contact.phoneNumber };
      const t = await tokens.getAccessToken({ userId: req.userId, chatbotId: req.chatbotId, clientApiKey: req.clientApiKey, contact });
      noStore(call);
      return {
        data: {
          accessToken: t.accessToken,
          refreshToken: t.refreshToken,
          accessTokenExpiresAt: BigInt(t.accessTokenExpiresAt),
          refreshTokenExpiresAt: BigInt(t.refreshTokenExpiresAt),
        },
      };
    },
    async refreshToken(req, call) {
      auth.requireServer(call);
      const t = await tokens.refresh({ userId: req.userId, chatbotId: req.chatbotId, refreshToken: req.refreshToken, clientApiKey: req.clientApiKey || undefined });
      noStore(call);
      return { data: { accessToken: t.accessToken, expiresAt: BigInt(t.expiresAt) } };
    },
    async getIdToken(req, call) {
      const apiKey = req.credential.case === "clientApiKey" ? req.credential.value : undefined;
      const password = req.credential.case === "password" ? req.credential.value : undefined;
      // People log in with a password from a browser; only the API-key form is server-only.
      if (apiKey !== undefined) auth.requireServer(call);
      const t = await tokens.getIdToken({ email: req.userEmailId, clientApiKey: apiKey, password });
      noStore(call);
      return { data: { idToken: t.idToken, expiresAt: BigInt(t.expiresAt) } };
    },
  };
}
