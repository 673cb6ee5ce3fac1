import type { Clock } from "../clock.js";
import { DomainError, invalidArgument, notFound } from "../errors.js";
import { hashSecret, newId, newSecret, requireUuid } from "../ids.js";
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

/** Administration of accounts, chatbots and API keys (the `aiagent` command and the demo bootstrap). */
export class AccountService {
  constructor(
    private readonly d: {
      accounts: AccountRepository;
      apiKeys: ApiKeyRepository;
      chatbots: ChatbotRepository;
      clock: Clock;
      /** Runs fn as one storage transaction. */
      atomically?: <T>(fn: () => T) => T;
    },
  ) {}

  /** Creates an account; its e-mail must be new. */
  async createAccount(email: string, password?: string): Promise<AccountRecord> {
    const e = requireEmail("email", email.trim());
    if (password !== undefined && password.length < 8)
      throw invalidArgument("password", "must be at least 8 characters");
    if (this.d.accounts.byEmail(e))
      throw new DomainError("failed_precondition", `an account with e-mail ${e} already exists`);
    const account: AccountRecord = {
      accountId: newId(),
      email: e,
      passwordHash: password ? await hashPassword(password) : null,
      active: true,
      createdAt: this.d.clock.now(),
    };
    this.d.accounts.insert(account);
    return account;
  }

  /** True once any account exists (the demo bootstrap runs only on an empty database). */
  hasAccounts(): boolean {
    return this.d.accounts.any();
  }

  /** Every account in e-mail order, read a page at a time. */
  *listAccounts(pageSize = 500): Generator<AccountRecord> {
    let after = "";
    for (;;) {
      const page = this.d.accounts.page(after, pageSize);
      yield* page;
      if (page.length < pageSize) return;
      after = page[page.length - 1]!.email;
    }
  }

  /** The account of an e-mail, or not_found. */
  account(email: string): AccountRecord {
    const a = this.d.accounts.byEmail(email);
    if (!a) throw notFound(`account ${email}`);
    return a;
  }

  /** Creates a chatbot for the account; refuses settings it could never work with. */
  createChatbot(
    email: string,
    name: string,
    allowedOrigins: readonly string[],
    knowledge: unknown = [],
  ): ChatbotRecord {
    const account = this.account(email);
    const chatbot: ChatbotRecord = {
      chatbotId: newId(),
      accountId: account.accountId,
      name: requireText("name", name),
      allowedOrigins: requireAllowedOrigins("allowed_origins", allowedOrigins),
      knowledge: requireKnowledge("knowledge", knowledge),
      active: true,
      createdAt: this.d.clock.now(),
    };
    this.d.chatbots.insert(chatbot);
    return chatbot;
  }

  /** The account's chatbots, oldest first. */
  listChatbots(email: string): ChatbotRecord[] {
    return this.d.chatbots.listForAccount(this.account(email).accountId);
  }

  /** Changes the account's chatbot; another account's chatbot is not_found, like a missing one. */
  updateChatbot(email: string, chatbotId: string, changes: ChatbotChanges): ChatbotRecord {
    const account = this.account(email);
    const id = requireUuid("chatbot_id", chatbotId);
    if (changes.name === undefined && changes.allowedOrigins === undefined && changes.knowledge === undefined)
      throw invalidArgument("chatbot", "nothing to change: give a name, allowed origins or knowledge");
    const current = this.d.chatbots.byId(id);
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
    if (!this.d.chatbots.update(next)) throw notFound(`chatbot ${id}`);
    return next;
  }

  /** Creates an API key; the key itself is returned once and only its hash is kept. */
  createApiKey(email: string, name = ""): IssuedApiKey {
    const account = this.account(email);
    return this.insertKey(account.accountId, optionalText("name", name));
  }

  /** The account's keys, oldest first: prefix, name, dates and status, never the key. */
  listApiKeys(email: string): ApiKeyView[] {
    const now = this.d.clock.now();
    return this.d.apiKeys.listForAccount(this.account(email).accountId).map((k) => apiKeyView(k, now));
  }

  /**
   * Makes a new key; every older unrevoked key keeps working for the grace period, then stops (sooner if an
   * earlier rotation already set it to). A grace of 0 stops them at once.
   */
  rotateApiKey(
    email: string,
    o: { graceSeconds?: number | undefined; name?: string | undefined } = {},
  ): IssuedApiKey & { olderKeys: { apiKeyId: string; prefix: string; expiresAt: number }[] } {
    const account = this.account(email);
    const grace = o.graceSeconds ?? DEFAULT_API_KEY_GRACE_SECONDS;
    if (!Number.isInteger(grace) || grace < 0 || grace > MAX_API_KEY_GRACE_SECONDS)
      throw invalidArgument("grace", `must be a whole number of seconds from 0 to ${MAX_API_KEY_GRACE_SECONDS}`);
    const name = optionalText("name", o.name ?? "");
    const now = this.d.clock.now();
    const until = now + grace * 1000;
    return this.atomically(() => {
      const older = this.d.apiKeys.listForAccount(account.accountId).filter((k) => apiKeyUsable(k, now));
      const k = this.insertKey(account.accountId, name);
      this.d.apiKeys.expireAllBut(account.accountId, k.apiKeyId, until);
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
  revokeApiKey(email: string, target: string): number {
    const account = this.account(email);
    const now = this.d.clock.now();
    if (target === "all") return this.d.apiKeys.revoke(account.accountId, "all", now);
    const id = requireUuid("id", target);
    if (!this.d.apiKeys.listForAccount(account.accountId).some((k) => k.apiKeyId === id))
      throw notFound(`api key ${id} of account ${account.email}`);
    return this.d.apiKeys.revoke(account.accountId, id, now);
  }

  private insertKey(accountId: string, name: string): IssuedApiKey {
    const clientApiKey = newSecret(API_KEY_PREFIX);
    const apiKeyId = newId();
    this.d.apiKeys.insert({
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

  private atomically<T>(fn: () => T): T {
    return this.d.atomically ? this.d.atomically(fn) : fn();
  }
}
