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
 * Issues, refreshes, checks and revokes the service's tokens, by use case — issuance (access-tokens.ts), launch codes
 * (launch-codes.ts), refresh (token-refresh.ts), ID tokens (id-tokens.ts), the checks on each call (token-checks.ts)
 * and revocation (revocations.ts), each taking from the token deps what its constructor names; what they share is in
 * credentials.ts. Callers hold the use case they call.
 */
export class TokenService {
  readonly access: AccessTokens;
  readonly launchCodes: LaunchCodes;
  readonly refreshes: TokenRefresh;
  readonly idTokens: IdTokens;
  readonly checks: TokenChecks;
  readonly revocations: Revocations;

  constructor(d: TokenServiceDeps) {
    this.access = new AccessTokens(d);
    this.launchCodes = new LaunchCodes(d);
    this.refreshes = new TokenRefresh(d);
    this.idTokens = new IdTokens(d);
    this.checks = new TokenChecks(d);
    this.revocations = new Revocations(d);
  }
}
