import { generateKeyPairSync } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { systemClock } from "../../src/domain/clock.js";
import type { Store } from "../../src/domain/store.js";
import { JwtStrategy } from "../../src/domain/token/jwt-strategy.js";
import { KeyRing } from "../../src/domain/token/key-ring.js";
import { KeySealer } from "../../src/domain/token/key-sealer.js";
import { type Harness, sqliteBackend } from "./contract/harness.js";

// Tokens are signed with node:crypto, which signs with whatever curve the key has: a stored key labelled ES256 must
// be a P-256 key, or every token it signed would carry a signature no verifier of ES256 accepts.
const sealer = new KeySealer(["a-test-secret-for-signing-key-curves-0123456789"]);
let h: Harness;

afterEach(() => h.close());

async function storeWith(namedCurve: string): Promise<Store> {
  h = await sqliteBackend.open();
  const { privateKey, publicKey } = generateKeyPairSync("ec", { namedCurve });
  const kid = `k-${namedCurve}`;
  await h.store.signingKeys.insert({
    kid,
    alg: "ES256",
    privateJwk: sealer.seal(JSON.stringify({ ...privateKey.export({ format: "jwk" }), kid, alg: "ES256" }), kid),
    publicJwk: JSON.stringify({ ...publicKey.export({ format: "jwk" }), kid, alg: "ES256", use: "sig" }),
    createdAt: Date.now(),
    retiredAt: null,
  });
  return h.store;
}

const open = (s: Store) => KeyRing.open(s.signingKeys, systemClock, { maxTokenLifetimeMs: 60_000, sealer });

describe("the active signing key's curve", () => {
  it("a P-256 key labelled ES256 signs", async () => {
    const ring = await open(await storeWith("P-256"));
    expect(ring.current.kid).toBe("k-P-256");
    const jwt = new JwtStrategy(ring, systemClock, "aiagent");
    const { token } = await jwt.signId(
      { accountId: "acc-1", email: "a@example.com", sessionId: "s-1", viaPassword: true },
      60,
    );
    await expect(jwt.verifyId(token)).resolves.toMatchObject({ accountId: "acc-1", email: "a@example.com" });
  });

  it("a P-384 key labelled ES256 is refused when the keys are loaded", async () => {
    await expect(open(await storeWith("P-384"))).rejects.toThrow(/"crv"/);
  });
});
