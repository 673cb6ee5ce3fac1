import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { type Config, ConfigError } from "./config.js";
import { KeySealer, MIN_SECRET_LENGTH } from "./domain/token/key-sealer.js";
import type { Logger } from "./log.js";

/** Where a generated key-encryption secret is kept outside production: beside the database file. */
export function generatedSecretPath(dbPath: string): string {
  return `${dbPath}.secret`;
}

/**
 * The sealer for the signing keys at rest: the operator's secrets; outside production, without them, a secret
 * generated once and kept beside the database (mode 0600) with a warning (`warn`: on every start, or only when it is
 * generated); in production, without them, no start.
 */
export function keySealer(
  config: Config,
  log: Logger,
  warn: "every start" | "when generated" = "every start",
): KeySealer {
  if (config.secrets) return new KeySealer(config.secrets);
  if (config.production)
    throw new ConfigError(
      "AIAGENT_SECRETS (or AIAGENT_SECRETS_FILE) must be set in production: it encrypts the token signing keys " +
        `stored in the database (at least ${MIN_SECRET_LENGTH} characters, e.g. \`openssl rand -base64 32\`)`,
    );
  if (config.dbPath === ":memory:") return new KeySealer([KeySealer.generateSecret()]);
  const file = generatedSecretPath(config.dbPath);
  let secret: string;
  let generated = false;
  try {
    secret = readFileSync(file, "utf8").trim();
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "ENOENT")
      throw new ConfigError(`cannot read the key-encryption secret ${file}: ${(e as Error).message}`);
    secret = KeySealer.generateSecret();
    // With PostgreSQL there is no database file: the secret still goes to the (default) data directory.
    mkdirSync(dirname(file), { recursive: true });
    // wx: never overwrite a secret another process has just written (its keys would no longer open).
    try {
      writeFileSync(file, `${secret}\n`, { mode: 0o600, flag: "wx" });
      generated = true;
    } catch (e2) {
      if ((e2 as NodeJS.ErrnoException).code !== "EEXIST") throw e2;
      secret = readFileSync(file, "utf8").trim();
    }
  }
  if (secret.length < MIN_SECRET_LENGTH) throw new ConfigError(`the key-encryption secret in ${file} is too short`);
  // The service says so on every start; an administration command only when it made the secret (once, not on each).
  if (warn === "every start" || generated)
    log.warn("signing keys are encrypted under a generated secret kept beside the database; set AIAGENT_SECRETS", {
      file,
    });
  return new KeySealer([secret]);
}
