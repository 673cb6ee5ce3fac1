import type {
  AccountRecord,
  AccountRepository,
  ApiKeyRecord,
  ApiKeyRepository,
  ChatbotRecord,
  ChatbotRepository,
  DemoSetupRepository,
} from "../../domain/account/repository.js";
import type { SigningKeyRecord, SigningKeyRepository } from "../../domain/token/repository.js";
import type { PgDb } from "./db.js";

type Row = Record<string, unknown>;

/** The channel a signing-key rotation is announced on. */
export const SIGNING_KEYS_CHANNEL = "aiagent_signing_keys";
const num = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

const toAccount = (r: Row): AccountRecord => ({
  accountId: r.account_id as string,
  email: r.email as string,
  passwordHash: (r.password_hash as string | null) ?? null,
  active: r.active as boolean,
  createdAt: Number(r.created_at),
});

/** Accounts in PostgreSQL; e-mails are unique and found case-insensitively. */
export function pgAccounts(db: PgDb): AccountRepository {
  return {
    insert: async (a) =>
      void (await db.count(
        "acc_insert",
        "INSERT INTO accounts (account_id, email, password_hash, active, created_at) VALUES ($1, $2, $3, $4, $5)",
        [a.accountId, a.email, a.passwordHash, a.active, a.createdAt],
      )),
    byEmail: async (email) =>
      (
        await db.rows("acc_by_email", `SELECT * FROM accounts WHERE (lower(email) COLLATE "C") = lower($1)`, [email])
      ).map(toAccount)[0],
    byId: async (id) =>
      (await db.rows("acc_by_id", "SELECT * FROM accounts WHERE account_id = $1", [id])).map(toAccount)[0],
    any: async () => (await db.rows("acc_any", "SELECT 1 FROM accounts LIMIT 1", [])).length > 0,
    page: async (after, limit) =>
      (
        await db.rows(
          "acc_page",
          `SELECT * FROM accounts WHERE (lower(email) COLLATE "C") > lower($1) ORDER BY (lower(email) COLLATE "C") LIMIT $2`,
          [after, limit],
        )
      ).map(toAccount),
    setPassword: async (id, hash) =>
      void (await db.count("acc_set_password", "UPDATE accounts SET password_hash = $1 WHERE account_id = $2", [
        hash,
        id,
      ])),
  };
}

const toKey = (r: Row): ApiKeyRecord => ({
  apiKeyId: r.api_key_id as string,
  accountId: r.account_id as string,
  keyHash: r.key_hash as string,
  hint: r.hint as string,
  name: r.name as string,
  createdAt: Number(r.created_at),
  revokedAt: num(r.revoked_at),
  expiresAt: num(r.expires_at),
  lastUsedAt: num(r.last_used_at),
});

/** API keys in PostgreSQL (hashes only). */
export function pgApiKeys(db: PgDb): ApiKeyRepository {
  return {
    insert: async (k) =>
      void (await db.count(
        "key_insert",
        "INSERT INTO api_keys (api_key_id, account_id, key_hash, hint, name, created_at, revoked_at, expires_at, last_used_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
        [k.apiKeyId, k.accountId, k.keyHash, k.hint, k.name, k.createdAt, k.revokedAt, k.expiresAt, k.lastUsedAt],
      )),
    byHash: async (h) =>
      (await db.rows("key_by_hash", "SELECT * FROM api_keys WHERE key_hash = $1", [h])).map(toKey)[0],
    listForAccount: async (accountId) =>
      (
        await db.rows("key_list", "SELECT * FROM api_keys WHERE account_id = $1 ORDER BY created_at, api_key_id", [
          accountId,
        ])
      ).map(toKey),
    revoke: (accountId, apiKeyId, at) =>
      apiKeyId === "all"
        ? db.count(
            "key_revoke_all",
            "UPDATE api_keys SET revoked_at = $1 WHERE account_id = $2 AND revoked_at IS NULL",
            [at, accountId],
          )
        : db.count(
            "key_revoke_one",
            "UPDATE api_keys SET revoked_at = $1 WHERE account_id = $2 AND api_key_id = $3 AND revoked_at IS NULL",
            [at, accountId, apiKeyId],
          ),
    expireAllBut: async (accountId, keep, at) =>
      void (await db.count(
        "key_expire",
        "UPDATE api_keys SET expires_at = least(coalesce(expires_at, $1), $1) WHERE account_id = $2 AND api_key_id <> $3 AND revoked_at IS NULL",
        [at, accountId, keep],
      )),
    touch: async (id, at, since) =>
      void (await db.count(
        "key_touch",
        "UPDATE api_keys SET last_used_at = $1 WHERE api_key_id = $2 AND (last_used_at IS NULL OR last_used_at < $3)",
        [at, id, since],
      )),
  };
}

const toChatbot = (r: Row): ChatbotRecord => ({
  chatbotId: r.chatbot_id as string,
  accountId: r.account_id as string,
  name: r.name as string,
  allowedOrigins: JSON.parse(r.allowed_origins as string) as string[],
  knowledge: JSON.parse(r.knowledge as string) as ChatbotRecord["knowledge"],
  agent: JSON.parse(r.agent as string) as ChatbotRecord["agent"],
  active: r.active as boolean,
  createdAt: Number(r.created_at),
});

/** Chatbots in PostgreSQL. */
export function pgChatbots(db: PgDb): ChatbotRepository {
  return {
    insert: async (c) =>
      void (await db.count(
        "bot_insert",
        "INSERT INTO chatbots (chatbot_id, account_id, name, allowed_origins, knowledge, agent, active, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
        [
          c.chatbotId,
          c.accountId,
          c.name,
          JSON.stringify(c.allowedOrigins),
          JSON.stringify(c.knowledge),
          JSON.stringify(c.agent),
          c.active,
          c.createdAt,
        ],
      )),
    byId: async (id) =>
      (await db.rows("bot_by_id", "SELECT * FROM chatbots WHERE chatbot_id = $1", [id])).map(toChatbot)[0],
    listForAccount: async (accountId) =>
      (
        await db.rows("bot_list", "SELECT * FROM chatbots WHERE account_id = $1 ORDER BY created_at, chatbot_id", [
          accountId,
        ])
      ).map(toChatbot),
    update: async (c) =>
      (await db.count(
        "bot_update",
        "UPDATE chatbots SET name = $1, allowed_origins = $2, knowledge = $3, agent = $4, active = $5 WHERE chatbot_id = $6 AND account_id = $7",
        [
          c.name,
          JSON.stringify(c.allowedOrigins),
          JSON.stringify(c.knowledge),
          JSON.stringify(c.agent),
          c.active,
          c.chatbotId,
          c.accountId,
        ],
      )) > 0,
  };
}

/** The demo's one setup row. */
export function pgDemoSetup(db: PgDb): DemoSetupRepository {
  return {
    get: async () => {
      const [r] = await db.rows(
        "demo_get",
        "SELECT account_id, chatbot_id, api_key_id FROM demo_setup WHERE id = 1",
        [],
      );
      return (
        r && { accountId: r.account_id as string, chatbotId: r.chatbot_id as string, apiKeyId: r.api_key_id as string }
      );
    },
    set: async (r) =>
      void (await db.count(
        "demo_set",
        "INSERT INTO demo_setup (id, account_id, chatbot_id, api_key_id) VALUES (1, $1, $2, $3) ON CONFLICT (id) DO UPDATE SET account_id = excluded.account_id, chatbot_id = excluded.chatbot_id, api_key_id = excluded.api_key_id",
        [r.accountId, r.chatbotId, r.apiKeyId],
      )),
  };
}

const toSigningKey = (r: Row): SigningKeyRecord => ({
  kid: r.kid as string,
  alg: r.alg as string,
  privateJwk: r.private_jwk as string,
  publicJwk: r.public_jwk as string,
  createdAt: Number(r.created_at),
  retiredAt: num(r.retired_at),
});

/** Signing keys, shared by every instance. */
export function pgSigningKeys(db: PgDb): SigningKeyRepository {
  return {
    list: async () =>
      (await db.rows("sk_list", "SELECT * FROM signing_keys ORDER BY created_at, kid", [])).map(toSigningKey),
    insert: async (k) =>
      void (await db.count(
        "sk_insert",
        "INSERT INTO signing_keys (kid, alg, private_jwk, public_jwk, created_at, retired_at) VALUES ($1, $2, $3, $4, $5, $6)",
        [k.kid, k.alg, k.privateJwk, k.publicJwk, k.createdAt, k.retiredAt],
      )),
    retireAllBut: async (kid, at) => {
      await db.count("sk_retire", "UPDATE signing_keys SET retired_at = $1 WHERE kid <> $2 AND retired_at IS NULL", [
        at,
        kid,
      ]);
      // Every instance's key ring reloads at once (delivered when this commits), whoever rotated: a server or the
      // `aiagent keys rotate` command.
      await db.rows("sk_notify", `SELECT pg_notify('${SIGNING_KEYS_CHANNEL}', $1)`, [kid]);
    },
    replacePrivateJwk: async (kid, was, now) =>
      void (await db.count(
        "sk_replace",
        "UPDATE signing_keys SET private_jwk = $1 WHERE kid = $2 AND private_jwk = $3",
        [now, kid, was],
      )),
  };
}
