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
  hint: string;
  createdAt: number;
  revokedAt: number | null;
}

/** A passage the built-in agent may answer from and cite. */
export interface KnowledgeSnippet {
  title: string;
  url: string;
  snippet: string;
}

/** An AI agent of an account. */
export interface ChatbotRecord {
  chatbotId: string;
  accountId: string;
  name: string;
  allowedOrigins: string[];
  knowledge: KnowledgeSnippet[];
  active: boolean;
  createdAt: number;
}

/** Storage of accounts. */
export interface AccountRepository {
  insert(a: AccountRecord): void;
  byEmail(email: string): AccountRecord | undefined;
  /** True once any account exists. */
  any(): boolean;
  byId(accountId: string): AccountRecord | undefined;
  setPassword(accountId: string, passwordHash: string): void;
}

/** Storage of API keys. */
export interface ApiKeyRepository {
  insert(k: ApiKeyRecord): void;
  byHash(keyHash: string): ApiKeyRecord | undefined;
  listForAccount(accountId: string): ApiKeyRecord[];
  /** Revokes one key (by id) or every live key of the account; returns how many were revoked. */
  revoke(accountId: string, apiKeyId: string | undefined, at: number): number;
}

/** Storage of chatbots. */
export interface ChatbotRepository {
  insert(c: ChatbotRecord): void;
  byId(chatbotId: string): ChatbotRecord | undefined;
  listForAccount(accountId: string): ChatbotRecord[];
}

/** What the first start made for the demo: its account, chatbot, and the API key the running /demo page uses. */
export interface DemoSetupRecord {
  accountId: string;
  chatbotId: string;
  apiKeyId: string;
}

/** Storage of the demo's setup (one record at most). */
export interface DemoSetupRepository {
  get(): DemoSetupRecord | undefined;
  set(r: DemoSetupRecord): void;
}
