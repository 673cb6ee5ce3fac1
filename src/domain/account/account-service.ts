import type { Clock } from "../clock.js";
import { DomainError, invalidArgument, notFound } from "../errors.js";
import { hashSecret, newId, newSecret, requireUuid } from "../ids.js";
import type { Repositories, Transact } from "../store.js";
import { optionalText, requireEmail, requireText } from "../validate.js";
import {
  type ApiKeyView,
  apiKeyUsable,
  apiKeyView,
  DEFAULT_API_KEY_GRACE_SECONDS,
  MAX_API_KEY_GRACE_SECONDS,
} from "./api-keys.js";
import { requireAllowedOrigins, requireKnowledge } from "./chatbot-rules.js";
import { hashPassword } from "./password.js";
import type {
  AccountRecord,
  AccountRepository,
  ApiKeyRepository,
  ChatbotRecord,
  ChatbotRepository,
} from "./repository.js";

/** Prefix of every client API key, so a leaked one is recognisable. */
export const API_KEY_PREFIX = "cak_";

/** What may change on a chatbot; an absent field stays as it is. */
export interface ChatbotChanges {
  name?: string | undefined;
  allowedOrigins?: readonly string[] | undefined;
  /** Parsed JSON: checked here to be a list of {title, url, snippet}. */
  knowledge?: unknown;
}

/** A new key (shown once) and, after a rotation, when the older keys stop. */
export interface IssuedApiKey {
  apiKeyId: string;
  clientApiKey: string;
}

/** The repositories an API key change reads and writes (the store's, or a transaction's). */
type KeyRepos = Pick<Repositories, "accounts" | "apiKeys">;

/** Administration of accounts, chatbots and API keys (the `aiagent` command and the demo bootstrap). */
export class AccountService {
  constructor(
    private readonly d: {
      accounts: AccountRepository;
      apiKeys: ApiKeyRepository;
      chatbots: ChatbotRepository;
      clock: Clock;
      /** Runs fn as one storage transaction. */
      transaction: Transact;
    },
  ) {}

  /** Creates an account; its e-mail must be new. */
  async createAccount(email: string, password?: string): Promise<AccountRecord> {
    const e = requireEmail("email", email.trim());
    if (password !== undefined && password.length < 8)
      throw invalidArgument("password", "must be at least 8 characters");
    if (await this.d.accounts.byEmail(e))
      throw new DomainError("failed_precondition", `an account with e-mail ${e} already exists`);
    const account: AccountRecord = {
      accountId: newId(),
      email: e,
      passwordHash: password ? await hashPassword(password) : null,
      active: true,
      createdAt: this.d.clock.now(),
    };
    await this.d.accounts.insert(account);
    return account;
  }

  /** True once any account exists (the demo bootstrap runs only on an empty database). */
  hasAccounts(): Promise<boolean> {
    return this.d.accounts.any();
  }

  /** Every account in e-mail order, read a page at a time. */
  async *listAccounts(pageSize = 500): AsyncGenerator<AccountRecord> {
    let after = "";
    for (;;) {
      const page = await this.d.accounts.page(after, pageSize);
      yield* page;
      if (page.length < pageSize) return;
      after = page[page.length - 1]!.email;
    }
  }

  /** The account of an e-mail, or not_found. */
  async account(email: string, tx: Pick<Repositories, "accounts"> = this.d): Promise<AccountRecord> {
    const a = await tx.accounts.byEmail(email);
    if (!a) throw notFound(`account ${email}`);
    return a;
  }

  /** Creates a chatbot for the account; refuses settings it could never work with. */
  async createChatbot(
    email: string,
    name: string,
    allowedOrigins: readonly string[],
    knowledge: unknown = [],
  ): Promise<ChatbotRecord> {
    const account = await this.account(email);
    const chatbot: ChatbotRecord = {
      chatbotId: newId(),
      accountId: account.accountId,
      name: requireText("name", name),
      allowedOrigins: requireAllowedOrigins("allowed_origins", allowedOrigins),
      knowledge: requireKnowledge("knowledge", knowledge),
      active: true,
      createdAt: this.d.clock.now(),
    };
    await this.d.chatbots.insert(chatbot);
    return chatbot;
  }

  /** The account's chatbots, oldest first. */
  async listChatbots(email: string): Promise<ChatbotRecord[]> {
    return this.d.chatbots.listForAccount((await this.account(email)).accountId);
  }

  /** Changes the account's chatbot; another account's chatbot is not_found, like a missing one. */
  async updateChatbot(email: string, chatbotId: string, changes: ChatbotChanges): Promise<ChatbotRecord> {
    const account = await this.account(email);
    const id = requireUuid("chatbot_id", chatbotId);
    if (changes.name === undefined && changes.allowedOrigins === undefined && changes.knowledge === undefined)
      throw invalidArgument("chatbot", "nothing to change: give a name, allowed origins or knowledge");
    const current = await this.d.chatbots.byId(id);
    if (!current || current.accountId !== account.accountId) throw notFound(`chatbot ${id}`);
    const next: ChatbotRecord = {
      ...current,
      name: changes.name === undefined ? current.name : requireText("name", changes.name),
      allowedOrigins:
        changes.allowedOrigins === undefined
          ? current.allowedOrigins
          : requireAllowedOrigins("allowed_origins", changes.allowedOrigins),
      knowledge: changes.knowledge === undefined ? current.knowledge : requireKnowledge("knowledge", changes.knowledge),
    };
    if (!(await this.d.chatbots.update(next))) throw notFound(`chatbot ${id}`);
    return next;
  }

  /** Creates an API key; the key itself is returned once and only its hash is kept. */
  async createApiKey(email: string, name = "", tx: KeyRepos = this.d): Promise<IssuedApiKey> {
    const account = await this.account(email, tx);
    return this.insertKey(tx, account.accountId, optionalText("name", name));
  }

  /** The account's keys, oldest first: prefix, name, dates and status, never the key. */
  async listApiKeys(email: string): Promise<ApiKeyView[]> {
    const now = this.d.clock.now();
    const keys = await this.d.apiKeys.listForAccount((await this.account(email)).accountId);
    return keys.map((k) => apiKeyView(k, now));
  }

  /**
   * Makes a new key; every older unrevoked key keeps working for the grace period, then stops (sooner if an
   * earlier rotation already set it to). A grace of 0 stops them at once.
   */
  async rotateApiKey(
    email: string,
    o: { graceSeconds?: number | undefined; name?: string | undefined } = {},
  ): Promise<IssuedApiKey & { olderKeys: { apiKeyId: string; prefix: string; expiresAt: number }[] }> {
    const account = await this.account(email);
    const grace = o.graceSeconds ?? DEFAULT_API_KEY_GRACE_SECONDS;
    if (!Number.isInteger(grace) || grace < 0 || grace > MAX_API_KEY_GRACE_SECONDS)
      throw invalidArgument("grace", `must be a whole number of seconds from 0 to ${MAX_API_KEY_GRACE_SECONDS}`);
    const name = optionalText("name", o.name ?? "");
    const now = this.d.clock.now();
    const until = now + grace * 1000;
    return this.d.transaction(async (tx) => {
      const older = (await tx.apiKeys.listForAccount(account.accountId)).filter((k) => apiKeyUsable(k, now));
      const k = await this.insertKey(tx, account.accountId, name);
      await tx.apiKeys.expireAllBut(account.accountId, k.apiKeyId, until);
      return {
        ...k,
        olderKeys: older.map((o) => ({
          apiKeyId: o.apiKeyId,
          prefix: o.hint,
          expiresAt: Math.min(o.expiresAt ?? until, until),
        })),
      };
    });
  }

  /** Revokes one key of the account (by id; another account's key is not_found) or, with "all", every key. */
  async revokeApiKey(email: string, target: string, tx: KeyRepos = this.d): Promise<number> {
    const account = await this.account(email, tx);
    const now = this.d.clock.now();
    if (target === "all") return tx.apiKeys.revoke(account.accountId, "all", now);
    const id = requireUuid("id", target);
    if (!(await tx.apiKeys.listForAccount(account.accountId)).some((k) => k.apiKeyId === id))
      throw notFound(`api key ${id} of account ${account.email}`);
    return tx.apiKeys.revoke(account.accountId, id, now);
  }

  private async insertKey(tx: Pick<Repositories, "apiKeys">, accountId: string, name: string): Promise<IssuedApiKey> {
    const clientApiKey = newSecret(API_KEY_PREFIX);
    const apiKeyId = newId();
    await tx.apiKeys.insert({
      apiKeyId,
      accountId,
      keyHash: hashSecret(clientApiKey),
      hint: clientApiKey.slice(0, 8),
      name,
      createdAt: this.d.clock.now(),
      revokedAt: null,
      expiresAt: null,
      lastUsedAt: null,
    });
    return { apiKeyId, clientApiKey };
  }
}
