import type { IssuedTokens, RefreshedTokens } from "../../domain/token/token-service.js";

// The JSON routes' answers of the two token calls every chat makes, written here rather than by the route's generic
// encoder (an object per message, then JSON.stringify, which scans each character of the tokens for one to escape):
// the same text, byte for byte (test/api/token-json.test.ts holds them to the encoder). The tokens are this service's
// own: a JWT is three base64url parts and two dots, a refresh token "rt_" and base64url; the instants are integers.
// Nothing in them is ever escaped.

/** GetAccessTokenResponse as the documented JSON, for tokens issued without a launch code. */
export function tokenSetJson(t: Omit<IssuedTokens, "sessionId" | "launchCode">): string {
  return `{"data":{"access_token":"${t.accessToken}","refresh_token":"${t.refreshToken}","access_token_expires_at":${t.accessTokenExpiresAt},"refresh_token_expires_at":${t.refreshTokenExpiresAt}}}`;
}

/** RefreshTokenResponse as the documented JSON. */
export function refreshedJson(t: RefreshedTokens): string {
  const next = t.refreshToken
    ? `,"refresh_token":"${t.refreshToken.token}","refresh_token_expires_at":${t.refreshToken.expiresAt}`
    : "";
  return `{"data":{"access_token":"${t.accessToken}","expires_at":${t.expiresAt}${next}}}`;
}
