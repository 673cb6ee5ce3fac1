import { randomBytes } from "node:crypto";
import { Ajv, type ValidateFunction } from "ajv";
import type { Sealer } from "../account/chatbot-rules.js";
import type { ChatbotRecord, ChatbotRepository } from "../account/repository.js";
import type { AccountCaller } from "../caller.js";
import type { Clock } from "../clock.js";
import { DomainError, invalidArgument, notFound } from "../errors.js";
import { newId, requireUuid } from "../ids.js";
import { CONTROL } from "../validate.js";
import { requireWebhookUrl } from "../webhook/target-policy.js";
import type { DraftToolRecord } from "./drafts.js";

/** A tool a chatbot's agent may call on the client's server, as stored (its secret sealed). */
export interface ToolRecord {
  toolId: string;
  accountId: string;
  chatbotId: string;
  name: string;
  description: string;
  /** JSON Schema of the arguments, as JSON text. */
  parameters: string;
  url: string;
  method: "POST" | "GET";
  timeoutMs: number;
  requiresApproval: boolean;
  /** The Standard Webhooks signing secret, sealed under the service's secrets and bound to the tool. */
  secretSealed: string;
  createdAt: number;
}

/** A chatbot's agent behaviour: instructions, handover rules, daily model budget. */
export interface AgentSettingsRecord {
  chatbotId: string;
  accountId: string;
  instructions: string;
  handoverPhrases: string[];
  /** Answers in a row that were "I don't know" before the team takes over (0: never). */
  dontKnowLimit: number;
  /** Model tokens a day (0: the service's default). */
  dailyTokenBudget: number;
  updatedAt: number;
}

/** Where a conversation stands when handed over to the team. */
export interface HandoverRecord {
  conversationId: string;
  reason: string;
  at: number;
}

/** Storage of tools, agent settings, model usage per day, and conversations waiting for the team. */
export interface AgentRepository {
  /** The chatbot's tools, by name. */
  tools(chatbotId: string): Promise<ToolRecord[]>;
  tool(accountId: string, chatbotId: string, toolId: string): Promise<ToolRecord | undefined>;
  /** False when the chatbot has a tool of that name already. */
  insertTool(t: ToolRecord): Promise<boolean>;
  /** False when there is no such tool, or another of the chatbot's tools has the name. */
  updateTool(t: ToolRecord): Promise<boolean>;
  deleteTool(accountId: string, chatbotId: string, toolId: string): Promise<boolean>;
  settings(chatbotId: string): Promise<AgentSettingsRecord | undefined>;
  putSettings(s: AgentSettingsRecord): Promise<void>;
  /** Adds to the tokens used by the chatbot on `day` (YYYY-MM-DD, UTC). */
  addTokens(chatbotId: string, day: string, tokens: number): Promise<void>;
  tokensUsed(chatbotId: string, day: string): Promise<number>;
  /** The conversation's handover to the team, while it waits for a person. */
  handover(conversationId: string): Promise<HandoverRecord | undefined>;
  setHandover(h: HandoverRecord): Promise<void>;
  clearHandover(conversationId: string): Promise<void>;
}

/** Tools a chatbot may have. */
export const MAX_TOOLS = 20;
/** Names the service's own tools take. */
export const BUILT_IN_TOOLS = ["handover", "search_knowledge"];
const NAME = /^[A-Za-z0-9_-]{1,64}$/;
const MAX_DESCRIPTION = 1024;
const MAX_PARAMETERS = 16384;
const MAX_INSTRUCTIONS = 4000;
const MAX_PHRASES = 50;
const MAX_PHRASE = 100;
export const DEFAULT_TOOL_TIMEOUT_MS = 10_000;

/** The defaults of a chatbot that has no agent settings stored. */
export function defaultSettings(chatbot: Pick<ChatbotRecord, "chatbotId" | "accountId">): AgentSettingsRecord {
  return {
    chatbotId: chatbot.chatbotId,
    accountId: chatbot.accountId,
    instructions: "",
    handoverPhrases: [],
    dontKnowLimit: 0,
    dailyTokenBudget: 0,
    updatedAt: 0,
  };
}

/** The `boundTo` of a tool's sealed secret: a sealed value moved to another tool does not open. */
export const toolSecretBinding = (toolId: string) => `tool:${toolId}`;

const ajv = new Ajv({ strict: false, allErrors: false, validateSchema: true });
const compiled = new Map<string, ValidateFunction>();

/** The validator of a tool's parameters schema (compiled once per schema text). */
export function argumentValidator(parameters: string): ValidateFunction {
  let v = compiled.get(parameters);
  if (!v) {
    v = ajv.compile(JSON.parse(parameters) as object);
    if (compiled.size > 1000) compiled.clear();
    compiled.set(parameters, v);
  }
  return v;
}

/** Checks a JSON Schema of arguments: JSON, an object schema, one Ajv compiles. Answers it normalised. */
export function requireParameters(field: string, raw: string): string {
  const text = raw.trim() === "" ? '{"type":"object","properties":{}}' : raw;
  if (text.length > MAX_PARAMETERS) throw invalidArgument(field, `must be at most ${MAX_PARAMETERS} characters`);
  let schema: unknown;
  try {
    schema = JSON.parse(text);
  } catch {
    throw invalidArgument(field, "must be JSON text (a JSON Schema)");
  }
  if (typeof schema !== "object" || schema === null || Array.isArray(schema))
    throw invalidArgument(field, "must be a JSON Schema object");
  if ((schema as { type?: unknown }).type !== "object")
    throw invalidArgument(field, 'must describe an object: {"type": "object", "properties": {…}}');
  if (JSON.stringify(schema).includes('"$ref":"http')) throw invalidArgument(field, "must not refer to remote schemas");
  try {
    ajv.compile(schema);
  } catch (e) {
    throw invalidArgument(field, `is not a valid JSON Schema: ${(e as Error).message.slice(0, 200)}`);
  }
  return JSON.stringify(schema);
}

function requireName(field: string, raw: string): string {
  if (!NAME.test(raw)) throw invalidArgument(field, "must be 1-64 letters, digits, _ or -");
  if (BUILT_IN_TOOLS.includes(raw.toLowerCase())) throw invalidArgument(field, `${raw} is a built-in tool's name`);
  return raw;
}

function requireDescription(field: string, raw: string): string {
  const d = raw.trim();
  if (d === "") throw invalidArgument(field, "is required: it tells the model when to use the tool");
  if (d.length > MAX_DESCRIPTION) throw invalidArgument(field, `must be at most ${MAX_DESCRIPTION} characters`);
  return d;
}

function requireTimeout(field: string, raw: number | undefined): number {
  if (raw === undefined || raw === 0) return DEFAULT_TOOL_TIMEOUT_MS;
  if (!Number.isInteger(raw) || raw < 100 || raw > 30_000)
    throw invalidArgument(field, "must be between 100 and 30000 milliseconds");
  return raw;
}

function requireMethod(field: string, raw: string | undefined): "POST" | "GET" {
  if (raw === undefined || raw === "" || raw === "POST") return "POST";
  if (raw === "GET") return "GET";
  throw invalidArgument(field, "must be POST or GET");
}

/** A new signing secret in the Standard Webhooks form: `whsec_` and the base64 of 32 random bytes. */
function newToolSecret(): string {
  return `whsec_${randomBytes(32).toString("base64")}`;
}

/** What the tool and settings use cases need. */
export interface AgentToolDeps {
  agents: AgentRepository;
  chatbots: Pick<ChatbotRepository, "byId">;
  clock: Clock;
  sealer: Sealer;
  /** Development: http to loopback is allowed for a tool's URL. */
  development: boolean;
  /** Checks at save time that the URL's host may be called (the SSRF guard checks again at each connection). */
  checkTarget?(field: string, url: string): Promise<void>;
  /** The service's default daily budget, in model tokens (0: none). */
  defaultDailyTokens: number;
}

/** Input of a tool's creation. */
export interface ToolInput {
  name: string;
  description: string;
  parameters: string;
  url: string;
  method: string;
  timeoutMs: number;
  requiresApproval: boolean;
}

/** The tools and agent settings of an account's chatbots. */
export class AgentTools {
  constructor(private readonly d: AgentToolDeps) {}

  /** Declares a tool; the secret is answered here only (stored sealed). */
  async create(
    caller: AccountCaller,
    chatbotId: string,
    input: ToolInput,
  ): Promise<{ tool: ToolRecord; secret: string }> {
    const bot = await this.chatbot(caller, chatbotId);
    const toolId = newId();
    const secret = newToolSecret();
    const url = requireWebhookUrl("url", input.url, this.d.development);
    const tool: ToolRecord = {
      toolId,
      accountId: caller.accountId,
      chatbotId: bot.chatbotId,
      name: requireName("name", input.name),
      description: requireDescription("description", input.description),
      parameters: requireParameters("parameters", input.parameters),
      url,
      method: requireMethod("method", input.method),
      timeoutMs: requireTimeout("timeout_ms", input.timeoutMs),
      requiresApproval: input.requiresApproval,
      secretSealed: this.d.sealer.seal(secret, toolSecretBinding(toolId)),
      createdAt: this.d.clock.now(),
    };
    await this.d.checkTarget?.("url", url);
    if ((await this.d.agents.tools(bot.chatbotId)).length >= MAX_TOOLS)
      throw new DomainError("failed_precondition", `a chatbot has at most ${MAX_TOOLS} tools`);
    if (!(await this.d.agents.insertTool(tool)))
      throw new DomainError("already_exists", `name: the chatbot has a tool named ${tool.name} already`, {
        field: "name",
      });
    return { tool, secret };
  }

  /** The chatbot's tools, by name. */
  async list(caller: AccountCaller, chatbotId: string): Promise<ToolRecord[]> {
    const bot = await this.chatbot(caller, chatbotId);
    return this.d.agents.tools(bot.chatbotId);
  }

  /** Changes what is given; with rotateSecret a new secret is answered (once). */
  async update(
    caller: AccountCaller,
    chatbotId: string,
    toolId: string,
    input: Partial<ToolInput> & { rotateSecret?: boolean },
  ): Promise<{ tool: ToolRecord; secret: string }> {
    const t = await this.tool(caller, chatbotId, toolId);
    const next: ToolRecord = { ...t };
    if (input.name !== undefined) next.name = requireName("name", input.name);
    if (input.description !== undefined) next.description = requireDescription("description", input.description);
    if (input.parameters !== undefined) next.parameters = requireParameters("parameters", input.parameters);
    if (input.url !== undefined) {
      next.url = requireWebhookUrl("url", input.url, this.d.development);
      await this.d.checkTarget?.("url", next.url);
    }
    if (input.method !== undefined) next.method = requireMethod("method", input.method);
    if (input.timeoutMs !== undefined) next.timeoutMs = requireTimeout("timeout_ms", input.timeoutMs);
    if (input.requiresApproval !== undefined) next.requiresApproval = input.requiresApproval;
    let secret = "";
    if (input.rotateSecret) {
      secret = newToolSecret();
      next.secretSealed = this.d.sealer.seal(secret, toolSecretBinding(t.toolId));
    }
    if (!(await this.d.agents.updateTool(next)))
      throw new DomainError("already_exists", `name: the chatbot has a tool named ${next.name} already`, {
        field: "name",
      });
    return { tool: next, secret };
  }

  /** Removes the tool. */
  async delete(caller: AccountCaller, chatbotId: string, toolId: string): Promise<void> {
    const t = await this.tool(caller, chatbotId, toolId);
    await this.d.agents.deleteTool(t.accountId, t.chatbotId, t.toolId);
  }

  /** The chatbot's agent settings and today's usage. */
  async settings(caller: AccountCaller, chatbotId: string): Promise<{ s: AgentSettingsRecord; usedToday: number }> {
    const bot = await this.chatbot(caller, chatbotId);
    const s = (await this.d.agents.settings(bot.chatbotId)) ?? defaultSettings(bot);
    return { s, usedToday: await this.d.agents.tokensUsed(bot.chatbotId, utcDay(this.d.clock.now())) };
  }

  /** Changes what is given. */
  async updateSettings(
    caller: AccountCaller,
    chatbotId: string,
    input: {
      instructions?: string | undefined;
      handoverPhrases?: readonly string[] | undefined;
      dontKnowLimit?: number | undefined;
      dailyTokenBudget?: number | undefined;
    },
  ): Promise<{ s: AgentSettingsRecord; usedToday: number }> {
    const bot = await this.chatbot(caller, chatbotId);
    const s = { ...((await this.d.agents.settings(bot.chatbotId)) ?? defaultSettings(bot)) };
    if (input.instructions !== undefined) {
      const text = input.instructions.trim();
      if (text.length > MAX_INSTRUCTIONS)
        throw invalidArgument("instructions", `must be at most ${MAX_INSTRUCTIONS} characters`);
      s.instructions = text;
    }
    if (input.handoverPhrases !== undefined) {
      if (input.handoverPhrases.length > MAX_PHRASES)
        throw invalidArgument("handover_phrases.phrases", `at most ${MAX_PHRASES} phrases`);
      s.handoverPhrases = input.handoverPhrases.map((p, i) => {
        const t = p.trim();
        if (t === "" || t.length > MAX_PHRASE || CONTROL.test(t))
          throw invalidArgument(`handover_phrases.phrases[${i}]`, `must be 1-${MAX_PHRASE} characters on one line`);
        return t;
      });
    }
    if (input.dontKnowLimit !== undefined) {
      if (!Number.isInteger(input.dontKnowLimit) || input.dontKnowLimit < 0 || input.dontKnowLimit > 20)
        throw invalidArgument("dont_know_limit", "must be between 0 and 20");
      s.dontKnowLimit = input.dontKnowLimit;
    }
    if (input.dailyTokenBudget !== undefined) {
      if (!Number.isInteger(input.dailyTokenBudget) || input.dailyTokenBudget < 0)
        throw invalidArgument("daily_token_budget", "must be a whole number of tokens, 0 or more");
      s.dailyTokenBudget = input.dailyTokenBudget;
    }
    s.updatedAt = this.d.clock.now();
    await this.d.agents.putSettings(s);
    return { s, usedToday: await this.d.agents.tokensUsed(bot.chatbotId, utcDay(this.d.clock.now())) };
  }

  /**
   * A draft's tool list, given as a whole, checked as tools are declared (each field named `tools.tools[i].…`): unique
   * names, at most MAX_TOOLS, and each tool_id one of the chatbot's live tools.
   */
  async checkDraftTools(
    chatbot: ChatbotRecord,
    input: readonly (ToolInput & { toolId: string })[],
  ): Promise<DraftToolRecord[]> {
    if (input.length > MAX_TOOLS) throw invalidArgument("tools.tools", `a chatbot has at most ${MAX_TOOLS} tools`);
    const live = new Set((await this.d.agents.tools(chatbot.chatbotId)).map((t) => t.toolId));
    const names = new Set<string>();
    const out: DraftToolRecord[] = [];
    for (const [i, t] of input.entries()) {
      const f = (x: string) => `tools.tools[${i}].${x}`;
      if (t.toolId !== "" && !live.has(t.toolId))
        throw invalidArgument(f("tool_id"), "is not one of the chatbot's tools");
      const name = requireName(f("name"), t.name);
      if (names.has(name.toLowerCase())) throw invalidArgument(f("name"), `${name} is in the list twice`);
      names.add(name.toLowerCase());
      const url = requireWebhookUrl(f("url"), t.url, this.d.development);
      await this.d.checkTarget?.(f("url"), url);
      out.push({
        toolId: t.toolId,
        name,
        description: requireDescription(f("description"), t.description),
        parameters: requireParameters(f("parameters"), t.parameters),
        url,
        method: requireMethod(f("method"), t.method),
        timeoutMs: requireTimeout(f("timeout_ms"), t.timeoutMs),
        requiresApproval: t.requiresApproval,
      });
    }
    return out;
  }

  /**
   * Makes a draft's tool list live: the live tools it leaves out are deleted, those it keeps updated (their secrets
   * unchanged), those it adds created; answers the created ones with their secrets (shown once).
   */
  async applyDraftTools(
    caller: AccountCaller,
    chatbot: ChatbotRecord,
    tools: readonly DraftToolRecord[],
  ): Promise<{ tool: ToolRecord; secret: string }[]> {
    const live = await this.d.agents.tools(chatbot.chatbotId);
    const kept = new Map(tools.filter((t) => t.toolId !== "").map((t) => [t.toolId, t]));
    for (const t of live) if (!kept.has(t.toolId)) await this.d.agents.deleteTool(t.accountId, t.chatbotId, t.toolId);
    const created: { tool: ToolRecord; secret: string }[] = [];
    for (const t of tools) {
      const current = live.find((x) => x.toolId === t.toolId);
      const fields = {
        name: t.name,
        description: t.description,
        parameters: t.parameters,
        url: t.url,
        method: t.method,
        timeoutMs: t.timeoutMs,
        requiresApproval: t.requiresApproval,
      };
      if (current) {
        if (!(await this.d.agents.updateTool({ ...current, ...fields })))
          throw new DomainError("already_exists", `name: the chatbot has a tool named ${t.name} already`, {
            field: "name",
          });
      } else created.push(await this.create(caller, chatbot.chatbotId, fields));
    }
    return created;
  }

  private async chatbot(caller: AccountCaller, chatbotId: string): Promise<ChatbotRecord> {
    const bot = await this.d.chatbots.byId(requireUuid("chatbot_id", chatbotId));
    // Another account's chatbot answers exactly as one that does not exist.
    if (!bot || bot.accountId !== caller.accountId) throw notFound("chatbot");
    return bot;
  }

  private async tool(caller: AccountCaller, chatbotId: string, toolId: string): Promise<ToolRecord> {
    const bot = await this.chatbot(caller, chatbotId);
    const t = await this.d.agents.tool(caller.accountId, bot.chatbotId, requireUuid("tool_id", toolId));
    if (!t) throw notFound("tool");
    return t;
  }
}

/** The UTC day of an instant, YYYY-MM-DD: the budget's period. */
export function utcDay(t: number): string {
  return new Date(t).toISOString().slice(0, 10);
}
