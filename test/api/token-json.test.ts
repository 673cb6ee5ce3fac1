import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GetAccessTokenResponseSchema, RefreshTokenResponseSchema } from "../../gen/aiagent/v1/token_service_pb.js";
import { systemClock } from "../../src/domain/clock.js";
import { newSecret } from "../../src/domain/ids.js";
import { deriveSuccessor, REFRESH_TOKEN_PREFIX } from "../../src/domain/token/credentials.js";
import { JwtStrategy } from "../../src/domain/token/jwt-strategy.js";
import { KeyRing } from "../../src/domain/token/key-ring.js";
import { KeySealer } from "../../src/domain/token/key-sealer.js";
import { newRotationSalt } from "../../src/domain/token/rotation.js";
import { toDocumentedJson } from "../../src/protocol/rest/json-codec.js";
import { refreshedJson, tokenSetJson } from "../../src/protocol/services/token-json.js";
import { type Harness, sqliteBackend } from "../storage/contract/harness.js";

// The token calls' JSON is written straight from the tokens (token-json.ts); it must be, byte for byte, what the JSON
// routes' generic encoder writes for the same answer, with tokens as the service makes them: signed for customers
// whose ids hold quotes, backslashes, control and non-ASCII characters (which land inside the token's base64url).

const sealer = new KeySealer(["a-test-secret-for-token-json-0123456789"]);
let h: Harness;
let jwt: JwtStrategy;

beforeAll(async () => {
  h = await sqliteBackend.open();
  jwt = new JwtStrategy(
    await KeyRing.open(h.store.signingKeys, systemClock, { maxTokenLifetimeMs: 60_000, sealer }),
    systemClock,
    "aiagent",
  );
});
afterAll(() => h.close());

const USERS = ["cust_1", 'a "quoted" id', "back\\slash", "line\nbreak\u0000", "é😀\u2028", "</script>"];

async function tokens(userId: string) {
  const access = await jwt.signAccess(
    { accountId: "acc-1", chatbotId: "6f1c7c52-2a63-4d2c-9d1e-000000000001", userId, sessionId: "s-1" },
    3600,
  );
  const refreshToken = newSecret(REFRESH_TOKEN_PREFIX);
  return { access, refreshToken, successor: deriveSuccessor(refreshToken, newRotationSalt()) };
}

describe("the token calls' JSON", () => {
  it("GetAccessToken's is the generic encoder's, byte for byte", async () => {
    for (const userId of USERS) {
      const { access, refreshToken } = await tokens(userId);
      const t = {
        accessToken: access.token,
        refreshToken,
        accessTokenExpiresAt: access.expiresAt,
        refreshTokenExpiresAt: access.expiresAt + 86_400_000 * 30,
      };
      const generic = toDocumentedJson(GetAccessTokenResponseSchema, {
        data: {
          ...t,
          accessTokenExpiresAt: BigInt(t.accessTokenExpiresAt),
          refreshTokenExpiresAt: BigInt(t.refreshTokenExpiresAt),
        },
      });
      expect(tokenSetJson(t)).toBe(JSON.stringify(generic));
    }
  });

  it("RefreshToken's is the generic encoder's, with and without a rotated refresh token", async () => {
    for (const userId of USERS) {
      const { access, successor } = await tokens(userId);
      const plain = { accessToken: access.token, expiresAt: access.expiresAt };
      expect(refreshedJson(plain)).toBe(
        JSON.stringify(
          toDocumentedJson(RefreshTokenResponseSchema, {
            data: { accessToken: plain.accessToken, expiresAt: BigInt(plain.expiresAt) },
          }),
        ),
      );
      const rotated = { ...plain, refreshToken: { token: successor, expiresAt: access.expiresAt + 1 } };
      expect(refreshedJson(rotated)).toBe(
        JSON.stringify(
          toDocumentedJson(RefreshTokenResponseSchema, {
            data: {
              accessToken: plain.accessToken,
              expiresAt: BigInt(plain.expiresAt),
              refreshToken: successor,
              refreshTokenExpiresAt: BigInt(rotated.refreshToken.expiresAt),
            },
          }),
        ),
      );
    }
  });

  it("an access token's claims are the ones it was signed with, the user id as given", async () => {
    for (const userId of USERS) {
      const { access } = await tokens(userId);
      await expect(jwt.verifyAccess(access.token)).resolves.toMatchObject({
        userId,
        accountId: "acc-1",
        sessionId: "s-1",
        expiresAt: access.expiresAt,
      });
    }
  });
});
