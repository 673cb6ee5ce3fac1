import type { Clock } from "../clock.js";
import { DomainError, invalidArgument, notFound } from "../errors.js";
import { hashSecret, newId, newSecret } from "../ids.js";
import { requireEmail, requireText } from "../validate.js";
import { hashPassword } from "./password.js";
import type {
  AccountRecord,
  AccountRepository,
  ApiKeyRepository,
  ChatbotRecord,
  ChatbotRepository,
  KnowledgeSnippet,
} from "./repository.js";

/** Prefix of every client API key, so a leaked one is recognisable. */
export const API_KEY_PREFIX = "cak_";

/** Administration of accounts, chatbots and API keys (the `aiagent` command and the demo bootstrap). */
export class AccountService {
  constructor(
    private readonly d: {
      accounts: AccountRepository;
      apiKeys: ApiKeyRepository;
      chatbots: ChatbotRepository;
      clock: Clock;
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

  /** The account of an e-mail, or not_found. */
  account(email: string): AccountRecord {
    const a = this.d.accounts.byEmail(email);
    if (!a) throw notFound(`account ${email}`);
    return a;
  }

  /** Creates a chatbot for the account. */
  createChatbot(
    email: string,
    name: string,
    allowedOrigins: string[],
    knowledge: KnowledgeSnippet[] = [],
  ): ChatbotRecord {
    const account = this.account(email);
    const origins = allowedOrigins.map((o) => {
      let u: URL;
      try {
        u = new URL(o);
      } catch {
        throw invalidArgument("allowed-origin", `${JSON.stringify(o)} is not a URL`);
      }
      if (u.protocol !== "https:" && u.protocol !== "http:")
        throw invalidArgument("allowed-origin", `${o} must be http or https`);
      return u.origin;
    });
    const chatbot: ChatbotRecord = {
      chatbotId: newId(),
      accountId: account.accountId,
      name: requireText("name", name),
      allowedOrigins: origins,
      knowledge,
      active: true,
      createdAt: this.d.clock.now(),
    };
    this.d.chatbots.insert(chatbot);
    return chatbot;
  }

  /** Creates an API key; the key itself is returned once and only its hash is kept. */
  createApiKey(email: string): { apiKeyId: string; clientApiKey: string } {
    const account = this.account(email);
    const clientApiKey = newSecret(API_KEY_PREFIX);
    const apiKeyId = newId();
    this.d.apiKeys.insert({
      apiKeyId,
      accountId: account.accountId,
      keyHash: hashSecret(clientApiKey),
      hint: clientApiKey.slice(0, 8),
      createdAt: this.d.clock.now(),
      revokedAt: null,
    });
    return { apiKeyId, clientApiKey };
  }

  /** Makes a new key and revokes every older one of the account. */
  rotateApiKey(email: string): { apiKeyId: string; clientApiKey: string; revoked: number } {
    const account = this.account(email);
    const older = this.d.apiKeys.listForAccount(account.accountId).filter((k) => k.revokedAt === null);
    const created = this.createApiKey(email);
    let revoked = 0;
    for (const k of older) revoked += this.d.apiKeys.revoke(account.accountId, k.apiKeyId, this.d.clock.now());
    return { ...created, revoked };
  }

  /** Revokes one key of the account, or all of them. */
  revokeApiKey(email: string, apiKeyId?: string): number {
    const account = this.account(email);
    return this.d.apiKeys.revoke(account.accountId, apiKeyId, this.d.clock.now());
  }
}
