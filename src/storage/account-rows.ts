import type { AccountRecord, ApiKeyRecord, ChatbotRecord, MemberRecord } from "../domain/account/repository.js";
import type { Role } from "../domain/caller.js";
import { appearanceFromJson, appearanceToJson } from "./appearance-json.js";
import { type Big, type Flag, isSet, numOrNull } from "./row-values.js";

// The rows of the account tables, the same on both back ends but for the conversions in row-values.ts.

/** A row of `accounts`. */
export interface AccountRow {
  account_id: string;
  email: string;
  password_hash: string | null;
  active: boolean | number;
  created_at: Big;
}

export const toAccount = (r: AccountRow): AccountRecord => ({
  accountId: r.account_id,
  email: r.email,
  passwordHash: r.password_hash ?? null,
  active: isSet(r.active),
  createdAt: Number(r.created_at),
});

/** The values of an account's insert, in column order. */
export const accountValues = (a: AccountRecord, flag: Flag) =>
  [a.accountId, a.email, a.passwordHash, flag(a.active), a.createdAt] as const;

/** A row of `api_keys` (hashes only). */
export interface ApiKeyRow {
  api_key_id: string;
  account_id: string;
  key_hash: string;
  hint: string;
  name: string;
  created_at: Big;
  revoked_at: Big | null;
  expires_at: Big | null;
  last_used_at: Big | null;
}

export const toApiKey = (r: ApiKeyRow): ApiKeyRecord => ({
  apiKeyId: r.api_key_id,
  accountId: r.account_id,
  keyHash: r.key_hash,
  hint: r.hint,
  name: r.name,
  createdAt: Number(r.created_at),
  revokedAt: numOrNull(r.revoked_at),
  expiresAt: numOrNull(r.expires_at),
  lastUsedAt: numOrNull(r.last_used_at),
});

/** The columns of an API key and its account in one row: the key's as they are, the account's prefixed. */
export const KEY_WITH_ACCOUNT_COLUMNS =
  "k.*, a.account_id AS a_account_id, a.email AS a_email, a.password_hash AS a_password_hash, a.active AS a_active, " +
  "a.created_at AS a_created_at";

/** A row of `api_keys` joined with its account's (null when the account is gone). */
export interface ApiKeyWithAccountRow extends ApiKeyRow {
  a_account_id: string | null;
  a_email: string;
  a_password_hash: string | null;
  a_active: boolean | number;
  a_created_at: Big;
}

export const toApiKeyWithAccount = (r: ApiKeyWithAccountRow) => ({
  key: toApiKey(r),
  account:
    r.a_account_id === null
      ? undefined
      : toAccount({
          account_id: r.a_account_id,
          email: r.a_email,
          password_hash: r.a_password_hash,
          active: r.a_active,
          created_at: r.a_created_at,
        }),
});

/** KEY_WITH_ACCOUNT_COLUMNS named in order, for a row read as an array (SQLite's raw mode). */
export const KEY_WITH_ACCOUNT_VALUES =
  "k.api_key_id, k.account_id, k.key_hash, k.hint, k.name, k.created_at, k.revoked_at, k.expires_at, k.last_used_at, " +
  "a.account_id, a.email, a.password_hash, a.active, a.created_at";

/** A row of KEY_WITH_ACCOUNT_VALUES. */
export type KeyWithAccountValues = [
  apiKeyId: string,
  accountId: string,
  keyHash: string,
  hint: string,
  name: string,
  createdAt: Big,
  revokedAt: Big | null,
  expiresAt: Big | null,
  lastUsedAt: Big | null,
  aAccountId: string | null,
  aEmail: string,
  aPasswordHash: string | null,
  aActive: boolean | number,
  aCreatedAt: Big,
];

/**
 * toApiKeyWithAccount of a row read as an array: a driver that builds each row as an object adds its columns one by
 * one (a property transition each, 14 here), where an array holds them as elements.
 */
export const fromKeyWithAccountValues = (v: KeyWithAccountValues) => ({
  key: {
    apiKeyId: v[0],
    accountId: v[1],
    keyHash: v[2],
    hint: v[3],
    name: v[4],
    createdAt: Number(v[5]),
    revokedAt: numOrNull(v[6]),
    expiresAt: numOrNull(v[7]),
    lastUsedAt: numOrNull(v[8]),
  } satisfies ApiKeyRecord,
  account:
    v[9] === null
      ? undefined
      : ({
          accountId: v[9],
          email: v[10],
          passwordHash: v[11] ?? null,
          active: isSet(v[12]),
          createdAt: Number(v[13]),
        } satisfies AccountRecord),
});

/** The values of an API key's insert, in column order. */
export const apiKeyValues = (k: ApiKeyRecord) =>
  [k.apiKeyId, k.accountId, k.keyHash, k.hint, k.name, k.createdAt, k.revokedAt, k.expiresAt, k.lastUsedAt] as const;

/** A row of `chatbots` (origins, knowledge and agent settings as JSON text). */
export interface ChatbotRow {
  chatbot_id: string;
  account_id: string;
  name: string;
  allowed_origins: string;
  knowledge: string;
  agent: string;
  appearance: string;
  active: boolean | number;
  created_at: Big;
  picture_id: string;
  first_response_sla_minutes: Big;
}

/** The columns a chatbot is read from: all but the picture's bytes, which only the picture route reads. */
export const CHATBOT_COLUMNS =
  "chatbot_id, account_id, name, allowed_origins, knowledge, agent, appearance, active, created_at, picture_id, first_response_sla_minutes";

export const toChatbot = (r: ChatbotRow): ChatbotRecord => ({
  chatbotId: r.chatbot_id,
  accountId: r.account_id,
  name: r.name,
  allowedOrigins: JSON.parse(r.allowed_origins) as string[],
  knowledge: JSON.parse(r.knowledge) as ChatbotRecord["knowledge"],
  agent: JSON.parse(r.agent) as ChatbotRecord["agent"],
  appearance: appearanceFromJson(r.appearance),
  active: isSet(r.active),
  createdAt: Number(r.created_at),
  pictureId: r.picture_id,
  firstResponseSlaMinutes: Number(r.first_response_sla_minutes),
});

/** The settings an update writes, in column order (name, origins, knowledge, agent, appearance, active, SLA). */
export const chatbotSettings = (c: Omit<ChatbotRecord, "createdAt">, flag: Flag) =>
  [
    c.name,
    JSON.stringify(c.allowedOrigins),
    JSON.stringify(c.knowledge),
    JSON.stringify(c.agent),
    appearanceToJson(c.appearance),
    flag(c.active),
    c.firstResponseSlaMinutes ?? 0,
  ] as const;

/** The values of a chatbot's insert, in column order. */
export const chatbotValues = (c: ChatbotRecord, flag: Flag) => {
  const [name, ...rest] = chatbotSettings(c, flag);
  return [c.chatbotId, c.accountId, name, ...rest, c.createdAt] as const;
};

/** A row of `members`. */
export interface MemberRow {
  member_id: string;
  account_id: string;
  email: string;
  role: string;
  password_hash: string | null;
  invitation_hash: string | null;
  invitation_expires_at: Big | null;
  created_at: Big;
  joined_at: Big | null;
}

export const toMember = (r: MemberRow): MemberRecord => ({
  memberId: r.member_id,
  accountId: r.account_id,
  email: r.email,
  role: r.role as Role,
  passwordHash: r.password_hash ?? null,
  invitationHash: r.invitation_hash ?? null,
  invitationExpiresAt: numOrNull(r.invitation_expires_at),
  createdAt: Number(r.created_at),
  joinedAt: numOrNull(r.joined_at),
});

/** The values of a member's update: what changes, then the member and account it is. */
export const memberUpdateValues = (m: Omit<MemberRecord, "email" | "createdAt">) =>
  [m.role, m.passwordHash, m.invitationHash, m.invitationExpiresAt, m.joinedAt, m.memberId, m.accountId] as const;
