import { AccessTokens } from "./access-tokens.js";
import type { TokenServiceDeps } from "./credentials.js";
import { IdTokens } from "./id-tokens.js";
import { LaunchCodes } from "./launch-codes.js";
import { Revocations } from "./revocations.js";
import { TokenChecks } from "./token-checks.js";
import { TokenRefresh } from "./token-refresh.js";

export { AccessTokens } from "./access-tokens.js";
export {
  type IssuedTokens,
  isUnknownCredential,
  LAUNCH_CODE_PREFIX,
  LAUNCH_CODE_TTL_MS,
  LaunchRefusedError,
  MAX_PASSWORD,
  REFRESH_TOKEN_PREFIX,
  type RefreshedTokens,
  type TokenLifetimes,
  type TokenServiceDeps,
  UnknownCredentialError,
} from "./credentials.js";
export { IdTokens } from "./id-tokens.js";
export { LaunchCodes } from "./launch-codes.js";
export { Revocations } from "./revocations.js";
export { TokenChecks } from "./token-checks.js";
export { TokenRefresh } from "./token-refresh.js";

/**
 * Issues, refreshes, checks and revokes the service's tokens: the one object the handlers hold, by use case —
 * issuance (access-tokens.ts), launch codes (launch-codes.ts), refresh (token-refresh.ts), ID tokens
 * (id-tokens.ts), the checks on each call (token-checks.ts) and revocation (revocations.ts); what they share is in
 * credentials.ts.
 */
export class TokenService {
  readonly getAccessToken: AccessTokens["getAccessToken"];
  readonly previewAccessToken: AccessTokens["previewAccessToken"];
  readonly peekLaunchCode: LaunchCodes["peekLaunchCode"];
  readonly exchangeLaunchCode: LaunchCodes["exchangeLaunchCode"];
  readonly refresh: TokenRefresh["refresh"];
  readonly getIdToken: IdTokens["getIdToken"];
  readonly authenticateFrame: TokenChecks["authenticateFrame"];
  readonly authenticateAccount: TokenChecks["authenticateAccount"];
  readonly chatbot: TokenChecks["chatbot"];
  readonly revokeLineage: Revocations["revokeLineage"];
  readonly signOut: Revocations["signOut"];
  readonly revoke: Revocations["revoke"];

  constructor(d: TokenServiceDeps) {
    const access = new AccessTokens(d);
    const launch = new LaunchCodes(d);
    const refresh = new TokenRefresh(d);
    const id = new IdTokens(d);
    const checks = new TokenChecks(d);
    const revocations = new Revocations(d);
    this.getAccessToken = access.getAccessToken.bind(access);
    this.previewAccessToken = access.previewAccessToken.bind(access);
    this.peekLaunchCode = launch.peekLaunchCode.bind(launch);
    this.exchangeLaunchCode = launch.exchangeLaunchCode.bind(launch);
    this.refresh = refresh.refresh.bind(refresh);
    this.getIdToken = id.getIdToken.bind(id);
    this.authenticateFrame = checks.authenticateFrame.bind(checks);
    this.authenticateAccount = checks.authenticateAccount.bind(checks);
    this.chatbot = checks.chatbot.bind(checks);
    this.revokeLineage = revocations.revokeLineage.bind(revocations);
    this.signOut = revocations.signOut.bind(revocations);
    this.revoke = revocations.revoke.bind(revocations);
  }
}
