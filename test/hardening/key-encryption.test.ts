import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { buildApp } from "../../src/app.js";
import { ConfigError, loadConfig } from "../../src/config.js";
import { KeySealer } from "../../src/domain/token/key-sealer.js";
import { generatedSecretPath } from "../../src/key-encryption.js";
import { createLogger } from "../../src/log.js";
import { issueTokens, send } from "../helpers/flows.js";
import { startServer } from "../helpers/server.js";
import { sqliteDb } from "../helpers/sqlite.js";
import { expectNoSecrets, runCli } from "./support.js";

// Signing private keys are encrypted at rest under the operator's key-encryption secrets (AIAGENT_SECRETS).
const S1 = "first-key-encryption-secret-0123456789abcdef";
const S2 = "second-key-encryption-secret-0123456789abcdef";
const dirs: string[] = [];
const freshDir = () => {
  const d = mkdtempSync(join(tmpdir(), "aiagent-kek-"));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** The private scalars of every stored signing key, opened with the given secrets. */
function privateScalars(dbPath: string, rows: { kid: string; privateJwk: string }[], secrets: string[]): string[] {
  const sealer = new KeySealer(secrets);
  const ds = rows.map((r) => (JSON.parse(sealer.open(r.privateJwk, r.kid)) as { d: string }).d);
  expect(ds.length, `keys of ${dbPath}`).toBeGreaterThan(0);
  return ds;
}

async function startFails(dir: string, env: Record<string, string>): Promise<string> {
  const config = loadConfig({ AIAGENT_DB: join(dir, "aiagent.db"), AIAGENT_PORT: "0", ...env });
  const err = await buildApp(config, createLogger("silent")).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ConfigError);
  return (err as Error).message;
}

describe("signing keys at rest", () => {
  it("a key stored in clear (before encryption at rest) is encrypted at the next start, and the file keeps no trace of it", async () => {
    const dir = freshDir();
    let s = await startServer({ dir, env: { AIAGENT_SECRETS: S1 } });
    const a = await s.account();
    const t = await issueTokens(s.url, a, "before");
    const [row] = await s.app.store.signingKeys.list();
    const [d] = privateScalars(s.dbPath, [row!], [S1]);
    // As a database written before this release holds it: the JWK in clear.
    sqliteDb(s.app)
      .prepare("UPDATE signing_keys SET private_jwk = ? WHERE kid = ?")
      .run(new KeySealer([S1]).open(row!.privateJwk, row!.kid), row!.kid);
    sqliteDb(s.app).pragma("wal_checkpoint(TRUNCATE)");
    expect(readFileSync(s.dbPath).toString("latin1").includes(d!), "the set-up wrote the key in clear").toBe(true);
    await s.close();

    s = await startServer({ dir, env: { AIAGENT_SECRETS: S1 } });
    try {
      const rows = await s.app.store.signingKeys.list();
      expect(rows.every((r) => KeySealer.isSealed(r.privateJwk))).toBe(true);
      expect(privateScalars(s.dbPath, rows, [S1])).toEqual([d]);
      // The same key signs on: the token issued before the restart is still good.
      expect((await send(s.url, t.access_token, "still me")).user_message.content).toBe("still me");
      sqliteDb(s.app).pragma("wal_checkpoint(TRUNCATE)");
      expect(readFileSync(s.dbPath).toString("latin1").includes(d!), "the clear key is still in the file").toBe(false);
      expectNoSecrets(s.logs, [S1, d!]);
    } finally {
      await s.close();
    }
  });

  it("secrets rotate: the first encrypts, every one decrypts, and a key under a secret no longer given refuses to start", async () => {
    const dir = freshDir();
    let s = await startServer({ dir, env: { AIAGENT_SECRETS: S1 } });
    const a = await s.account();
    const t = await issueTokens(s.url, a, "rotating");
    const d = privateScalars(s.dbPath, await s.app.store.signingKeys.list(), [S1]);
    await s.close();

    // S2 first, S1 still given: the stored key is re-encrypted under S2 at start.
    s = await startServer({ dir, env: { AIAGENT_SECRETS: `${S2}, ${S1}` } });
    expect(privateScalars(s.dbPath, await s.app.store.signingKeys.list(), [S2])).toEqual(d);
    const stored = await s.app.store.signingKeys.list();
    expect(() => privateScalars(s.dbPath, stored, [S1])).toThrow(/not configured/);
    await s.close();

    // S1 dropped: the service starts with S2 alone and the old token still verifies.
    s = await startServer({ dir, env: { AIAGENT_SECRETS: S2 } });
    expect((await send(s.url, t.access_token, "after rotation")).user_message.content).toBe("after rotation");
    await s.close();

    // Only the old secret: the key cannot be opened; start-up says so, and names neither secret.
    const message = await startFails(dir, { AIAGENT_SECRETS: S1 });
    expect(message).toMatch(/encrypted under a secret that is not configured \(AIAGENT_SECRETS\)/);
    expect(message.includes(S1) || message.includes(S2)).toBe(false);
  });

  it("an altered encrypted key refuses to start, naming the cause", async () => {
    const dir = freshDir();
    const s = await startServer({ dir, env: { AIAGENT_SECRETS: S1 } });
    const [row] = await s.app.store.signingKeys.list();
    const parts = row!.privateJwk.split(":");
    parts[3] = Buffer.from(Buffer.from(parts[3]!, "base64url").map((b, i) => (i === 0 ? b ^ 1 : b))).toString(
      "base64url",
    );
    sqliteDb(s.app).prepare("UPDATE signing_keys SET private_jwk = ? WHERE kid = ?").run(parts.join(":"), row!.kid);
    await s.close();
    expect(await startFails(dir, { AIAGENT_SECRETS: S1 })).toMatch(/does not decrypt: it was altered/);
  });

  it("outside production, without a secret, one is generated beside the database (0600) with a warning, and kept", async () => {
    const dir = freshDir();
    let s = await startServer({ dir });
    const file = generatedSecretPath(s.dbPath);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const secret = readFileSync(file, "utf8").trim();
    expect(secret.length).toBeGreaterThanOrEqual(32);
    expect(s.logs.some((l) => l.includes('"level":"warn"') && l.includes("set AIAGENT_SECRETS"))).toBe(true);
    const d = privateScalars(s.dbPath, await s.app.store.signingKeys.list(), [secret]);
    await s.close();
    s = await startServer({ dir });
    expect(readFileSync(file, "utf8").trim()).toBe(secret);
    expect(privateScalars(s.dbPath, await s.app.store.signingKeys.list(), [secret])).toEqual(d);
    expectNoSecrets(s.logs, [secret]);
    await s.close();
  });

  it("in production, without a secret, the service refuses to start and says what to set", async () => {
    const dir = freshDir();
    const r = await runCli(["serve", "--db", join(dir, "aiagent.db"), "--port", "0"], {
      NODE_ENV: "production",
      AIAGENT_SECRETS: "",
      AIAGENT_SECRETS_FILE: "",
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/AIAGENT_SECRETS \(or AIAGENT_SECRETS_FILE\) must be set in production/);
    expect(() => statSync(generatedSecretPath(join(dir, "aiagent.db")))).toThrow();
  });

  it("a secret file is read, one secret a line; a short secret is refused without being echoed", () => {
    const dir = freshDir();
    expect(() => loadConfig({ AIAGENT_SECRETS: "too-short-secret" })).toThrow(
      /AIAGENT_SECRETS: secret 1 has 16 characters; each must have at least 32/,
    );
    expect(() => loadConfig({ AIAGENT_SECRETS: `${S1},too-short-secret` })).toThrow(
      /^AIAGENT_SECRETS: secret 2 has 16 characters; each must have at least 32$/,
    );
    const file = join(dir, "secrets");
    writeFileSync(file, `${S2}\n${S1}\n`);
    expect(loadConfig({ AIAGENT_SECRETS_FILE: file }).secrets).toEqual([S2, S1]);
    expect(() => loadConfig({ AIAGENT_SECRETS: S1, AIAGENT_SECRETS_FILE: file })).toThrow(/not both/);
  });
});
