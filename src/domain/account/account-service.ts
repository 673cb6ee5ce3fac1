import type { AuditActor, AuditLog, AuditTx } from "../audit/audit-log.js";
import type { AccountCaller } from "../caller.js";
import type { Clock } from "../clock.js";
import { DomainError, invalidArgument, notFound } from "../errors.js";
import { hashSecret, newId, newSecret, requireUuid } from "../ids.js";
import type { Transact } from "../unit.js";
import { optionalText, requireEmail, requireText } from "../validate.js";
import {
  type ApiKeyView,
  apiKeyUsable,
  apiKeyView,
  DEFAULT_API_KEY_GRACE_SECONDS,
  MAX_API_KEY_GRACE_SECONDS,
} from "./api-keys.js";
import { type AppearanceInput, DEFAULT_APPEARANCE, officeState, requireAppearance } from "./appearance.js";
import {
  type AgentInput,
  requireAgent,
  requireAllowedOrigins,
  requireKnowledge,
  type Sealer,
} from "./chatbot-rules.js";
import { hashPassword } from "./password.js";
import type {
  AccountRecord,
  AccountRepository,
  ApiKeyRecord,
  ApiKeyRepository,
  ChatbotRecord,
  ChatbotRepository,
  MemberRepository,
} from "./repository.js";

/** What the account use cases write in their units of work. */
export interface AccountTx extends AuditTx {
  accounts: AccountRepository;
  apiKeys: ApiKeyRepository;
  chatbots: ChatbotRepository;
}

/** Prefix of every client API key, so a leaked one is recognisable. */
export const API_KEY_PREFIX = "cak_";

/** What may change on a chatbot; an absent field stays as it is. */
export interface ChatbotChanges {
  name?: string | undefined;
  allowedOrigins?: readonly string[] | undefined;
  /** Parsed JSON: checked here to be a list of {title, url, snippet}. */
  knowledge?: unknown;
  agent?: AgentInput | undefined;
  appearance?: AppearanceInput | undefined;
  active?: boolean | undefined;
  /** The first-response SLA in minutes, 0 (none) to MAX_SLA_MINUTES. */
  firstResponseSlaMinutes?: number | undefined;
}

/** The longest first-response SLA a chatbot may set: a week. */
export const MAX_SLA_MINUTES = 10_080;

/** A first-response SLA as given: whole minutes, 0 (none) to a week. */
function requireSlaMinutes(v: number): number {
  if (!Number.isInteger(v) || v < 0 || v > MAX_SLA_MINUTES)
    throw invalidArgument("first_response_sla_minutes", `must be a whole number of minutes, 0 to ${MAX_SLA_MINUTES}`);
  return v;
}

/**
 * Whose account an operation is on: an e-mail (the `aiagent` command, run by the service's operator) or the
 * authenticated caller of the account API (whose account it always is).
 */
export type AccountRef = string | AccountCaller;

/** What an agent endpoint's sealed API key is bound to: it opens for this chatbot only. */
export function agentKeyBinding(chatbotId: string): string {
  return `chatbot ${chatbotId} agent api key`;
}

/** A new key (shown once) and, after a rotation, when the older keys stop. */
export interface IssuedApiKey {
  apiKeyId: string;
  clientApiKey: string;
  /** The new key as listings show it. */
  view: ApiKeyView;
}

/** Administration of accounts, chatbots and API keys (the `aiagent` command and the demo bootstrap). */
export class AccountService {
  constructor(
    private readonly d: {
      accounts: AccountRepository;
      apiKeys: ApiKeyRepository;
      chatbots: ChatbotRepository;
      /** The members of every account: an account's e-mail must not be one of theirs (sign-in is by e-mail). */
      members?: Pick<MemberRepository, "byEmail">;
      clock: Clock;
      /** Runs fn as one storage transaction. */
      transaction: Transact<AccountTx>;
      /** Seals the agents' endpoint API keys at rest. */
      sealer: Sealer;
      /** Whether an agent endpoint may be plain http on loopback (development only). */
      allowLoopbackHttp?: boolean;
      /** Refuses an agent endpoint the service may not reach (outside development: a non-public address). */
      checkEndpoint?: (field: string, url: string) => Promise<void>;
      /** The accounts' audit log: key changes are recorded in the unit of work that makes them. */
      audit?: AuditLog<AccountTx>;
    },
  ) {}

  /** Creates an account; its e-mail must be new. */
  async createAccount(email: string, password?: string): Promise<AccountRecord> {
    const e = requireEmail("email", email.trim());
    if (password !== undefined && password.length < 8)
      throw invalidArgument("password", "must be at least 8 characters");
    if (await this.d.accounts.byEmail(e))
      throw new DomainError("failed_precondition", `an account with e-mail ${e} already exists`);
    // Password sign-in finds a person by e-mail: an owner and a member with one address could not both sign in.
    if (await this.d.members?.byEmail(e))
      throw new DomainError("failed_precondition", `${e} is already a member of an account`);
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

  /** The account of an e-mail or of the caller, or not_found. */
  async account(ref: AccountRef, tx: Pick<AccountTx, "accounts"> = this.d): Promise<AccountRecord> {
    const a = typeof ref === "string" ? await tx.accounts.byEmail(ref) : await tx.accounts.byId(ref.accountId);
    if (!a) throw notFound(`account ${typeof ref === "string" ? ref : ref.accountId}`);
    return a;
  }

  /**
   * Sets or resets the owner's password (the `aiagent account password` command: whoever runs it holds the
   * database). An account made without one can then sign in to the console.
   */
  async setOwnerPassword(email: string, password: string): Promise<void> {
    const account = await this.account(requireEmail("email", email.trim()));
    if (password.length < 8) throw invalidArgument("password", "must be at least 8 characters");
    await this.d.accounts.setPassword(account.accountId, await hashPassword(password));
  }

  /** Creates a chatbot for the account; refuses settings it could never work with. */
  async createChatbot(
    ref: AccountRef,
    name: string,
    allowedOrigins: readonly string[],
    knowledge: unknown = [],
    agent?: AgentInput,
    appearance: AppearanceInput = {},
    firstResponseSlaMinutes = 0,
  ): Promise<ChatbotRecord> {
    const account = await this.account(ref);
    const chatbotId = newId();
    const chatbot: ChatbotRecord = {
      chatbotId,
      accountId: account.accountId,
      name: requireText("name", name),
      allowedOrigins: requireAllowedOrigins("allowed_origins", allowedOrigins),
      knowledge: requireKnowledge("knowledge", knowledge),
      agent: requireAgent("agent", agent, { kind: "built_in" }, this.agentRules(chatbotId)),
      appearance: requireAppearance("appearance", appearance, DEFAULT_APPEARANCE),
      active: true,
      createdAt: this.d.clock.now(),
      pictureId: "",
      firstResponseSlaMinutes: requireSlaMinutes(firstResponseSlaMinutes),
    };
    await this.checkAgent(chatbot.agent);
    await this.d.chatbots.insert(chatbot);
    return chatbot;
  }

  /** Whether the chatbot's team is in now, by the service's clock, and if not when it is back. */
  officeNow(c: ChatbotRecord): { open: boolean; nextOpen: number | undefined } {
    return officeState(c.appearance.officeHours, this.d.clock.now());
  }

  /** The account's chatbots, oldest first. */
  async listChatbots(ref: AccountRef): Promise<ChatbotRecord[]> {
    return this.d.chatbots.listForAccount((await this.account(ref)).accountId);
  }

  /** The account's chatbot; another account's is not_found, like a missing one. */
  async chatbot(ref: AccountRef, chatbotId: string): Promise<ChatbotRecord> {
    const account = await this.account(ref);
    const id = requireUuid("chatbot_id", chatbotId);
    const c = await this.d.chatbots.byId(id);
    if (!c || c.accountId !== account.accountId) throw notFound(`chatbot ${id}`);
    return c;
  }

  /** Changes the account's chatbot; another account's chatbot is not_found, like a missing one. */
  async updateChatbot(ref: AccountRef, chatbotId: string, changes: ChatbotChanges): Promise<ChatbotRecord> {
    if (Object.values(changes).every((v) => v === undefined))
      throw invalidArgument(
        "chatbot",
        "nothing to change: give a name, allowed origins, knowledge, agent settings, appearance or first-response SLA",
      );
    const current = await this.chatbot(ref, chatbotId);
    const id = current.chatbotId;
    const next: ChatbotRecord = {
      ...current,
      name: changes.name === undefined ? current.name : requireText("name", changes.name),
      allowedOrigins:
        changes.allowedOrigins === undefined
          ? current.allowedOrigins
          : requireAllowedOrigins("allowed_origins", changes.allowedOrigins),
      knowledge: changes.knowledge === undefined ? current.knowledge : requireKnowledge("knowledge", changes.knowledge),
      agent:
        changes.agent === undefined
          ? current.agent
          : requireAgent("agent", changes.agent, current.agent, this.agentRules(id)),
      appearance:
        changes.appearance === undefined
          ? current.appearance
          : requireAppearance("appearance", changes.appearance, current.appearance),
      active: changes.active ?? current.active,
      firstResponseSlaMinutes:
        changes.firstResponseSlaMinutes === undefined
          ? (current.firstResponseSlaMinutes ?? 0)
          : requireSlaMinutes(changes.firstResponseSlaMinutes),
    };
    if (changes.agent !== undefined) await this.checkAgent(next.agent);
    // The audit log names the settings that changed (never their values: the agent's key is among them).
    const fields = CHATBOT_FIELDS.filter(([k]) => JSON.stringify(current[k]) !== JSON.stringify(next[k])).map(
      ([, name]) => name,
    );
    const audit = this.d.audit;
    if (!audit || fields.length === 0) {
      if (!(await this.d.chatbots.update(next))) throw notFound(`chatbot ${id}`);
      return next;
    }
    const who: AuditActor = typeof ref === "string" ? { kind: "service", accountId: current.accountId } : ref;
    const updated = await audit.within(who, "chatbot.updated", id, (tx) => tx.chatbots.update(next), {
      fields: fields.join(","),
    });
    if (!updated) throw notFound(`chatbot ${id}`);
    return next;
  }

  /** Creates an API key; the key itself is returned once and only its hash is kept. */
  async createApiKey(ref: AccountRef, name = "", tx?: AccountTx): Promise<IssuedApiKey> {
    if (!tx) return this.d.transaction((t) => this.createApiKey(ref, name, t));
    const account = await this.account(ref, tx);
    const k = await this.insertKey(tx, account.accountId, optionalText("name", name));
    await this.d.audit?.record(tx, actorOf(ref, account), "api_key.created", k.apiKeyId, { prefix: k.view.prefix });
    return k;
  }

  /** The account's keys, oldest first: prefix, name, dates and status, never the key. */
  async listApiKeys(ref: AccountRef): Promise<ApiKeyView[]> {
    const now = this.d.clock.now();
    const keys = await this.d.apiKeys.listForAccount((await this.account(ref)).accountId);
    return keys.map((k) => apiKeyView(k, now));
  }

  /**
   * Makes a new key; every older unrevoked key keeps working for the grace period, then stops (sooner if an
   * earlier rotation already set it to). A grace of 0 stops them at once.
   */
  async rotateApiKey(
    ref: AccountRef,
    o: { graceSeconds?: number | undefined; name?: string | undefined } = {},
  ): Promise<IssuedApiKey & { olderKeys: { apiKeyId: string; prefix: string; expiresAt: number }[] }> {
    const account = await this.account(ref);
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
      await this.d.audit?.record(tx, actorOf(ref, account), "api_key.rotated", k.apiKeyId, { grace_seconds: grace });
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
  async revokeApiKey(ref: AccountRef, target: string, tx?: AccountTx): Promise<number> {
    if (!tx) return this.d.transaction((t) => this.revokeApiKey(ref, target, t));
    const account = await this.account(ref, tx);
    const now = this.d.clock.now();
    const id = target === "all" ? "all" : requireUuid("id", target);
    if (id !== "all" && !(await tx.apiKeys.listForAccount(account.accountId)).some((k) => k.apiKeyId === id))
      throw notFound(`api key ${id} of account ${account.email}`);
    const n = await tx.apiKeys.revoke(account.accountId, id, now);
    if (n > 0) await this.d.audit?.record(tx, actorOf(ref, account), "api_key.revoked", id, { revoked: n });
    return n;
  }

  private async checkAgent(agent: ChatbotRecord["agent"]): Promise<void> {
    if (agent.kind === "openai_compatible") await this.d.checkEndpoint?.("agent.base_url", agent.baseUrl);
  }

  private agentRules(chatbotId: string) {
    return {
      sealer: this.d.sealer,
      boundTo: agentKeyBinding(chatbotId),
      allowLoopbackHttp: !!this.d.allowLoopbackHttp,
    };
  }

  private async insertKey(tx: Pick<AccountTx, "apiKeys">, accountId: string, name: string): Promise<IssuedApiKey> {
    const clientApiKey = newSecret(API_KEY_PREFIX);
    const now = this.d.clock.now();
    const record: ApiKeyRecord = {
      apiKeyId: newId(),
      accountId,
      keyHash: hashSecret(clientApiKey),
      hint: clientApiKey.slice(0, 8),
      name,
      createdAt: now,
      revokedAt: null,
      expiresAt: null,
      lastUsedAt: null,
    };
    await tx.apiKeys.insert(record);
    return { apiKeyId: record.apiKeyId, clientApiKey, view: apiKeyView(record, now) };
  }
}

/** Who changed the account's keys: its caller, or the service itself (the command line, the demo set-up). */
/** A chatbot's settings as the audit log names them when they change. */
const CHATBOT_FIELDS: [keyof ChatbotRecord, string][] = [
  ["name", "name"],
  ["allowedOrigins", "allowed_origins"],
  ["knowledge", "knowledge"],
  ["agent", "agent"],
  ["appearance", "appearance"],
  ["active", "active"],
  ["firstResponseSlaMinutes", "first_response_sla_minutes"],
];

function actorOf(ref: AccountRef, account: AccountRecord): AuditActor {
  return typeof ref === "string" ? { kind: "service", accountId: account.accountId } : ref;
}
