import type { Role } from "../caller.js";
import type { ChatbotAppearance } from "./appearance.js";
import type { StoredPicture } from "./operator-picture.js";

/** An account: the client's service account, owner of API keys, chatbots and contacts. */
export interface AccountRecord {
  accountId: string;
  email: string;
  passwordHash: string | null;
  active: boolean;
  createdAt: number;
}

/** An API key as stored: only its hash and a short hint to recognise it by. */
export interface ApiKeyRecord {
  apiKeyId: string;
  accountId: string;
  keyHash: string;
  /** The key's first characters (`cak_` and four more), to tell keys apart; never enough to use it. */
  hint: string;
  /** A label the owner gave it ("" when none). */
  name: string;
  createdAt: number;
  revokedAt: number | null;
  /** After a rotation: the key stops working at this instant (the grace period's end). */
  expiresAt: number | null;
  /** Last accepted use, to a resolution of LAST_USED_RESOLUTION_MS. */
  lastUsedAt: number | null;
}

/** A passage the built-in agent may answer from and cite. */
export interface KnowledgeSnippet {
  title: string;
  url: string;
  snippet: string;
}

/**
 * Which agent answers a chatbot's customers: the service's own, or an OpenAI-compatible endpoint whose API key is
 * kept sealed (encrypted under the service's secrets, bound to the chatbot) and never read back by the API.
 */
export type ChatbotAgent =
  | {
      kind: "built_in";
      /**
       * The owner chose the built-in agent (kind "built_in" given): it answers even when the service's default agent
       * is a model (AIAGENT_LLM_*). Absent: the service's default agent answers.
       */
      explicit?: boolean;
    }
  | { kind: "openai_compatible"; baseUrl: string; model: string; apiKeySealed: string | null };

/** An AI agent of an account. */
export interface ChatbotRecord {
  chatbotId: string;
  accountId: string;
  name: string;
  allowedOrigins: string[];
  knowledge: KnowledgeSnippet[];
  agent: ChatbotAgent;
  /** How its frame looks, and its team's office hours. */
  appearance: ChatbotAppearance;
  active: boolean;
  createdAt: number;
  /** Its agent's picture's id, as read from storage ("" or absent: none); set only through setPicture. */
  pictureId?: string;
  /**
   * Its first-response SLA in minutes (0 or absent: none): a conversation that goes to the team must have a
   * person's reply within it (conversation/timers.ts).
   */
  firstResponseSlaMinutes?: number;
}

/**
 * A person of an account other than its owner (whose e-mail and password are the account's own). Invited until
 * they accept the one-time invitation (kept as a hash) by setting a password.
 */
export interface MemberRecord {
  memberId: string;
  accountId: string;
  email: string;
  role: Role;
  passwordHash: string | null;
  invitationHash: string | null;
  invitationExpiresAt: number | null;
  createdAt: number;
  joinedAt: number | null;
}

/**
 * A pending invitation of one account: who is invited, with what role, and the one-time code's hash. Each account
 * has its own (one per e-mail in it): another account's invitations, members or owners of that e-mail play no part
 * until it is accepted. Its id becomes the member's id when it is accepted.
 */
export interface InvitationRecord {
  invitationId: string;
  accountId: string;
  email: string;
  role: Role;
  codeHash: string;
  expiresAt: number;
  createdAt: number;
}

/** Storage of accounts. */
export interface AccountRepository {
  insert(a: AccountRecord): Promise<void>;
  byEmail(email: string): Promise<AccountRecord | undefined>;
  /** True once any account exists. */
  any(): Promise<boolean>;
  byId(accountId: string): Promise<AccountRecord | undefined>;
  /** Up to `limit` accounts whose e-mail sorts after `afterEmail` (case-insensitively), in e-mail order. */
  page(afterEmail: string, limit: number): Promise<AccountRecord[]>;
  setPassword(accountId: string, passwordHash: string): Promise<void>;
}

/** Storage of API keys. */
export interface ApiKeyRepository {
  insert(k: ApiKeyRecord): Promise<void>;
  byHash(keyHash: string): Promise<ApiKeyRecord | undefined>;
  /** The key with this hash and its account (undefined when the account is gone), read in one statement. */
  byHashWithAccount(keyHash: string): Promise<{ key: ApiKeyRecord; account: AccountRecord | undefined } | undefined>;
  listForAccount(accountId: string): Promise<ApiKeyRecord[]>;
  /** Revokes one key of the account (by id) or every one not yet revoked; returns how many were revoked. */
  revoke(accountId: string, apiKeyId: string | "all", at: number): Promise<number>;
  /** Makes the account's unrevoked keys other than `keep` stop at `at`, unless they already stop earlier. */
  expireAllBut(accountId: string, keep: string, at: number): Promise<void>;
  /** Records a use at `at` unless one at or after `since` is recorded already. */
  touch(apiKeyId: string, at: number, since: number): Promise<void>;
}

/** Storage of chatbots. */
export interface ChatbotRepository {
  insert(c: ChatbotRecord): Promise<void>;
  byId(chatbotId: string): Promise<ChatbotRecord | undefined>;
  listForAccount(accountId: string): Promise<ChatbotRecord[]>;
  /** Replaces the settings of the account's chatbot (never its picture); false when it has no such chatbot. */
  update(c: Omit<ChatbotRecord, "createdAt">): Promise<boolean>;
  /** Sets (undefined: removes) the agent's picture of the account's chatbot; false when it has no such chatbot. */
  setPicture(accountId: string, chatbotId: string, picture: StoredPicture | undefined): Promise<boolean>;
  /** An active chatbot's picture, by the picture's id. */
  picture(pictureId: string): Promise<StoredPicture | undefined>;
}

/** Storage of members (people who accepted an invitation). An e-mail is a member of one account at most. */
export interface MemberRepository {
  insert(m: MemberRecord): Promise<void>;
  /** The account's member (another account's is undefined). */
  byId(accountId: string, memberId: string): Promise<MemberRecord | undefined>;
  /** The member of any account with this e-mail, case-insensitively. */
  byEmail(email: string): Promise<MemberRecord | undefined>;
  byInvitation(invitationHash: string): Promise<MemberRecord | undefined>;
  /** The account's members in e-mail order. */
  listForAccount(accountId: string): Promise<MemberRecord[]>;
  /** Replaces the role, password and invitation of the account's member; false when it has no such member. */
  update(
    m: Pick<
      MemberRecord,
      "memberId" | "accountId" | "role" | "passwordHash" | "invitationHash" | "invitationExpiresAt" | "joinedAt"
    >,
  ): Promise<boolean>;
  /**
   * Uses an invitation once: sets the member's password and joins them, only if the invitation is still there and
   * unexpired at `now` (of two uses at once, one succeeds); false otherwise.
   */
  acceptInvitation(invitationHash: string, passwordHash: string, now: number): Promise<boolean>;
  /** Removes the account's member; false when it has no such member. */
  remove(accountId: string, memberId: string): Promise<boolean>;
  /** Inserts a member unless a member of any account has its e-mail already (then false, nothing written). */
  join(m: MemberRecord): Promise<boolean>;
}

/** Storage of invitations: one per (account, e-mail), case-insensitively; reads and writes scoped to the account. */
export interface InvitationRepository {
  /** False, writing nothing, when the account has an invitation of this e-mail already (of two at once, one wins). */
  insert(i: InvitationRecord): Promise<boolean>;
  byId(accountId: string, invitationId: string): Promise<InvitationRecord | undefined>;
  /** The account's invitation of this e-mail, case-insensitively (another account's is undefined). */
  byEmail(accountId: string, email: string): Promise<InvitationRecord | undefined>;
  byCode(codeHash: string): Promise<InvitationRecord | undefined>;
  /** The account's invitations in e-mail order. */
  listForAccount(accountId: string): Promise<InvitationRecord[]>;
  /** Replaces the role and the code of the account's invitation; false when it has no such invitation. */
  update(i: Pick<InvitationRecord, "invitationId" | "accountId" | "role" | "codeHash" | "expiresAt">): Promise<boolean>;
  /** Removes the account's invitation; false when it has no such invitation. */
  remove(accountId: string, invitationId: string): Promise<boolean>;
  /** Uses an invitation up: removes it only if it is still there and unexpired at `now` (of two uses, one wins). */
  take(codeHash: string, now: number): Promise<boolean>;
  /**
   * Whether another account holds an invitation of the same e-mail (case-insensitively), unexpired at `now` and made
   * before this one: the earlier invitation decides who may take the e-mail.
   */
  earlierElsewhere(i: InvitationRecord, now: number): Promise<boolean>;
}

/** What the first start made for the demo: its account, chatbot, and the API key the running /demo page uses. */
export interface DemoSetupRecord {
  accountId: string;
  chatbotId: string;
  apiKeyId: string;
}

/** Storage of the demo's setup (one record at most). */
export interface DemoSetupRepository {
  get(): Promise<DemoSetupRecord | undefined>;
  set(r: DemoSetupRecord): Promise<void>;
}
