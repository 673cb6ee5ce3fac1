import { requireKnowledge } from "../account/chatbot-rules.js";
import type { ChatbotRecord, ChatbotRepository, KnowledgeSnippet } from "../account/repository.js";
import type { Agent, AgentTurn, ReplyScope } from "../agent/agent.js";
import {
  type AgentDraftRecord,
  type AgentDraftRepository,
  type DraftToolRecord,
  draftKnowledgeKey,
} from "../agent/drafts.js";
import {
  type AgentRepository,
  type AgentTools,
  defaultSettings,
  type ToolInput,
  type ToolRecord,
} from "../agent/tools.js";
import type { AccountCaller } from "../caller.js";
import type { Clock } from "../clock.js";
import { DomainError, invalidArgument, notFound } from "../errors.js";
import { requireUuid } from "../ids.js";
import { type KnowledgeService, MAX_SOURCES, type SourceInput } from "../knowledge/knowledge-service.js";
import type { KnowledgeSourceRecord } from "../knowledge/source.js";
import { optionalText } from "../validate.js";
import type { ConversationRepository } from "./repository.js";

/** Questions one replay asks at most (test cases and conversations together). */
export const MAX_REPLAY = 50;
/** How many of a replayed conversation's latest messages the agent is shown. */
const REPLAY_CONTEXT = 20;
const MAX_INSTRUCTIONS = 4000;
/** The longest one replay may take (each question is asked twice). */
const REPLAY_MS = 5 * 60_000;

/** A question of a test set and what a good answer has. */
export interface ReplayCase {
  question: string;
  expectedFacts: readonly string[];
  expectedSources: readonly string[];
  expectedTools: readonly string[];
}

/** One configuration's answer to one question. */
export interface ReplayAnswer {
  content: string;
  documents: KnowledgeSnippet[];
  toolCalls: string;
  handover: string;
  /** Of a test case: whether it has every expected fact, source and tool; what it lacks. */
  passes: boolean;
  missing: string[];
}

/** One question answered by the live configuration and by the draft. */
export interface ReplayItem {
  conversationId: string;
  question: string;
  live: ReplayAnswer;
  draft: ReplayAnswer;
  differences: ("content" | "documents" | "tool_calls" | "handover")[];
}

/** What drafts and replays need. */
export interface AgentReplayDeps {
  drafts: AgentDraftRepository;
  chatbots: Pick<ChatbotRepository, "byId">;
  conversations: Pick<ConversationRepository, "byId" | "messages">;
  agents: Pick<AgentRepository, "settings" | "tools">;
  /** Checks a draft's tool list as tools are declared. */
  tools: Pick<AgentTools, "checkDraftTools">;
  /** The knowledge sources: the draft's own are stored under its knowledge key (draftKnowledgeKey). */
  knowledge: Pick<KnowledgeService, "createDraftSource" | "sourcesOf" | "removeSourceOf" | "moveSource">;
  /** The agent as customers get it (the director around the chatbot's agent). */
  agent: Agent;
  clock: Clock;
  /**
   * Makes the draft live: its instructions, knowledge list and model (checked as the live settings' own rules do),
   * and its tools; answers the tools it created with their secrets.
   */
  publish(
    caller: AccountCaller,
    chatbot: ChatbotRecord,
    draft: AgentDraftRecord,
  ): Promise<{ tool: ToolRecord; secret: string }[]>;
}

/** A draft tool with what publishing does with it. */
export type DraftToolView = DraftToolRecord & { change: "unchanged" | "changed" | "added" };

/** A draft as answered: with its tools' changes, the live tools it removes, and its own knowledge sources. */
export interface DraftView {
  draft: AgentDraftRecord;
  tools: DraftToolView[];
  removedTools: ToolRecord[];
  leftOutSources: string[];
  draftSources: KnowledgeSourceRecord[];
}

/** A draft tool's input (PutAgentDraft's tools). */
export type DraftToolInput = ToolInput & { toolId: string };

/**
 * Drafts of a chatbot's agent, and replays: the same questions asked of the live configuration and of the draft,
 * side by side, before the draft is published. A replay stores nothing and calls no tool (each call is dry_run).
 */
export class AgentReplay {
  constructor(private readonly d: AgentReplayDeps) {}

  async get(caller: AccountCaller, chatbotId: string): Promise<DraftView> {
    const bot = await this.chatbot(caller, chatbotId);
    const draft = await this.d.drafts.draft(bot.chatbotId);
    if (!draft) throw notFound("agent draft");
    return this.view(draft);
  }

  /** Changes what is given; the first change makes the draft from the live configuration. */
  async put(
    caller: AccountCaller,
    chatbotId: string,
    input: {
      instructions?: string | undefined;
      knowledge?: unknown;
      model?: string | undefined;
      tools?: readonly DraftToolInput[] | undefined;
      leftOutSources?: readonly string[] | undefined;
    },
  ): Promise<DraftView> {
    const bot = await this.chatbot(caller, chatbotId);
    const draft = (await this.d.drafts.draft(bot.chatbotId)) ?? (await this.fromLive(bot));
    // Checked before anything changes: bad input changes nothing.
    const tools = input.tools === undefined ? undefined : await this.d.tools.checkDraftTools(bot, input.tools);
    let leftOut: string[] | undefined;
    let dropped: string[] = [];
    if (input.leftOutSources !== undefined) {
      if (input.leftOutSources.length > MAX_SOURCES)
        throw invalidArgument("sources.left_out_source_ids", `at most ${MAX_SOURCES}`);
      const live = new Set((await this.d.knowledge.sourcesOf(bot.chatbotId)).map((x) => x.sourceId));
      const own = new Set((await this.d.knowledge.sourcesOf(draftKnowledgeKey(bot.chatbotId))).map((x) => x.sourceId));
      input.leftOutSources.forEach((id, i) => {
        const field = `sources.left_out_source_ids[${i}]`;
        requireUuid(field, id);
        if (!live.has(id) && !own.has(id))
          throw invalidArgument(field, "is not one of the chatbot's knowledge sources");
      });
      leftOut = [...new Set(input.leftOutSources.filter((id) => live.has(id)))];
      dropped = input.leftOutSources.filter((id) => own.has(id));
    }
    if (input.instructions !== undefined) {
      const text = input.instructions.trim();
      if (text.length > MAX_INSTRUCTIONS)
        throw invalidArgument("instructions", `must be at most ${MAX_INSTRUCTIONS} characters`);
      draft.instructions = text;
    }
    if (input.knowledge !== undefined) draft.knowledge = requireKnowledge("knowledge.snippets", input.knowledge);
    if (input.model !== undefined) {
      const model = optionalText("model", input.model, 200).trim();
      if (model !== "" && bot.agent.kind !== "openai_compatible")
        throw invalidArgument("model", "applies to a chatbot whose agent is an OpenAI-compatible endpoint");
      draft.model = model;
    }
    if (tools) draft.tools = tools;
    if (leftOut) draft.leftOutSources = leftOut;
    draft.updatedAt = this.d.clock.now();
    await this.d.drafts.putDraft(draft);
    // A draft's own source left out is removed (it was never live).
    for (const id of dropped) await this.d.knowledge.removeSourceOf(draftKnowledgeKey(bot.chatbotId), id);
    return this.view(draft);
  }

  /**
   * Adds a knowledge source to the draft only (the draft is made from the live configuration when there is none):
   * indexed under the draft's knowledge key, searched by a replay's draft side only until published.
   */
  async addSource(caller: AccountCaller, chatbotId: string, input: SourceInput): Promise<KnowledgeSourceRecord> {
    // The source's input is checked first (naming its field), then the chatbot, as CreateKnowledgeSource does.
    const s = await this.d.knowledge.createDraftSource(caller, chatbotId, input, draftKnowledgeKey);
    const bot = await this.chatbot(caller, chatbotId);
    if (!(await this.d.drafts.draft(bot.chatbotId)))
      await this.d.drafts.putDraft({ ...(await this.fromLive(bot)), updatedAt: this.d.clock.now() });
    return { ...s, chatbotId: bot.chatbotId };
  }

  /** Drops the draft with the sources added to it only; nothing live changes. */
  async drop(caller: AccountCaller, chatbotId: string): Promise<void> {
    const bot = await this.chatbot(caller, chatbotId);
    if (!(await this.d.drafts.deleteDraft(bot.chatbotId))) throw notFound("agent draft");
    const key = draftKnowledgeKey(bot.chatbotId);
    for (const s of await this.d.knowledge.sourcesOf(key)) await this.d.knowledge.removeSourceOf(key, s.sourceId);
  }

  /**
   * Makes the draft live and drops it: its settings and tools (publish), then its knowledge sources: those it leaves
   * out removed, its own moved to the live knowledge (indexed again there). Answers the tools it created, with their
   * secrets (shown once).
   */
  async publish(caller: AccountCaller, chatbotId: string): Promise<{ tool: ToolRecord; secret: string }[]> {
    const bot = await this.chatbot(caller, chatbotId);
    const draft = await this.d.drafts.draft(bot.chatbotId);
    if (!draft) throw notFound("agent draft");
    const created = await this.d.publish(caller, bot, draft);
    for (const id of draft.leftOutSources ?? []) await this.d.knowledge.removeSourceOf(bot.chatbotId, id);
    const key = draftKnowledgeKey(bot.chatbotId);
    for (const s of await this.d.knowledge.sourcesOf(key))
      await this.d.knowledge.moveSource(s.sourceId, key, bot.chatbotId);
    await this.d.drafts.deleteDraft(bot.chatbotId);
    return created;
  }

  async replay(
    caller: AccountCaller,
    chatbotId: string,
    input: { lastConversations: number; cases: readonly ReplayCase[] },
  ): Promise<ReplayItem[]> {
    const live = await this.chatbot(caller, chatbotId);
    if (!Number.isInteger(input.lastConversations) || input.lastConversations < 0)
      throw invalidArgument("last_conversations", "must be a whole number, 0 or more");
    if (input.cases.length + input.lastConversations > MAX_REPLAY)
      throw invalidArgument("last_conversations", `a replay asks at most ${MAX_REPLAY} questions, test cases included`);
    input.cases.forEach((c, i) => {
      if (c.question.trim() === "") throw invalidArgument(`cases[${i}].question`, "is required");
    });
    const draft = await this.d.drafts.draft(live.chatbotId);
    // No draft: not found, as reading or publishing it is.
    if (!draft) throw notFound("agent draft");
    const liveInstructions = ((await this.d.agents.settings(live.chatbotId)) ?? defaultSettings(live)).instructions;
    // The draft side: its tools (as the director takes them; never called, so never a secret) and its knowledge.
    const draftSide = {
      instructions: draft.instructions,
      ...(draft.tools
        ? {
            tools: draft.tools.map(
              (t, i): ToolRecord => ({
                ...t,
                toolId: t.toolId || `draft-tool-${i + 1}`,
                accountId: live.accountId,
                chatbotId: live.chatbotId,
                secretSealed: "",
                createdAt: 0,
              }),
            ),
          }
        : {}),
      knowledge: { leftOut: draft.leftOutSources ?? [], draftKey: draftKnowledgeKey(live.chatbotId) },
    };
    const drafted: ChatbotRecord = {
      ...live,
      knowledge: draft.knowledge,
      agent:
        live.agent.kind === "openai_compatible" && draft.model !== ""
          ? { ...live.agent, model: draft.model }
          : live.agent,
    };
    const questions: { conversationId: string; history: AgentTurn[]; expected?: ReplayCase }[] = input.cases.map(
      (c) => ({ conversationId: "", history: [{ role: "user", content: c.question }], expected: c }),
    );
    if (input.lastConversations > 0)
      for (const id of await this.d.drafts.latestConversations(live.chatbotId, input.lastConversations)) {
        const history = await this.history(id);
        if (history) questions.push({ conversationId: id, history });
      }
    const signal = AbortSignal.timeout(REPLAY_MS);
    const items: ReplayItem[] = [];
    // One question at a time: a replay is the owner's check, not a load on the model or the store.
    for (const q of questions) {
      const ask = (bot: ChatbotRecord, side: NonNullable<ReplyScope["replay"]>) =>
        this.answer(bot, q.history, q.conversationId, caller, side, signal, q.expected);
      const a = await ask(live, { instructions: liveInstructions });
      const b = await ask(drafted, draftSide);
      items.push({
        conversationId: q.conversationId,
        question: q.history.at(-1)!.content,
        live: a,
        draft: b,
        differences: differences(a, b),
      });
    }
    return items;
  }

  /** A past conversation up to its last customer message, as the agent was shown it then. */
  private async history(conversationId: string): Promise<AgentTurn[] | undefined> {
    const conv = await this.d.conversations.byId(conversationId);
    if (!conv) return undefined;
    const { messages } = await this.d.conversations.messages(
      conv,
      REPLAY_CONTEXT,
      Math.max(0, conv.messageCount - REPLAY_CONTEXT),
    );
    const last = messages.findLastIndex((m) => m.role === "user");
    if (last < 0) return undefined;
    return messages.slice(0, last + 1).map((m) => ({ role: m.role, content: m.content, toolCalls: m.toolCalls }));
  }

  private async answer(
    chatbot: ChatbotRecord,
    history: AgentTurn[],
    conversationId: string,
    caller: AccountCaller,
    replay: NonNullable<ReplyScope["replay"]>,
    signal: AbortSignal,
    expected?: ReplayCase,
  ): Promise<ReplayAnswer> {
    const scope = { accountId: caller.accountId, conversationId, userId: "", replay };
    let out: ReplayAnswer = { content: "", documents: [], toolCalls: "", handover: "", passes: true, missing: [] };
    try {
      for await (const ev of this.d.agent.reply(chatbot, history, signal, scope))
        if (ev.type === "done")
          out = {
            ...out,
            content: ev.content,
            documents: ev.documents,
            toolCalls: ev.toolCalls,
            handover: ev.handover ?? "",
          };
    } catch (e) {
      throw new DomainError(
        "unavailable",
        `the replay could not ask the agent: ${(e as Error).message.slice(0, 200)}`,
        {
          cause: e,
        },
      );
    }
    if (!expected) return out;
    const text = out.content.toLowerCase();
    const cited = out.documents.flatMap((d) => [d.title.toLowerCase(), d.url.toLowerCase()]);
    const called = new Set(callNames(out.toolCalls));
    const missing = [
      ...expected.expectedFacts.filter((f) => !text.includes(f.toLowerCase())).map((f) => `fact: ${f}`),
      ...expected.expectedSources.filter((s) => !cited.includes(s.toLowerCase())).map((s) => `source: ${s}`),
      ...expected.expectedTools.filter((t) => !called.has(t)).map((t) => `tool: ${t}`),
    ];
    return { ...out, passes: missing.length === 0, missing };
  }

  private async fromLive(bot: ChatbotRecord): Promise<AgentDraftRecord> {
    const settings = (await this.d.agents.settings(bot.chatbotId)) ?? defaultSettings(bot);
    return {
      chatbotId: bot.chatbotId,
      accountId: bot.accountId,
      instructions: settings.instructions,
      knowledge: bot.knowledge,
      model: bot.agent.kind === "openai_compatible" ? bot.agent.model : "",
      tools: (await this.d.agents.tools(bot.chatbotId)).map(draftTool),
      leftOutSources: [],
      updatedAt: 0,
    };
  }

  /** The draft with what it changes: its tools against the live ones, and its own knowledge sources. */
  private async view(draft: AgentDraftRecord): Promise<DraftView> {
    const live = await this.d.agents.tools(draft.chatbotId);
    const tools = draft.tools ?? live.map(draftTool);
    const kept = new Set(tools.map((t) => t.toolId));
    const liveIds = new Set((await this.d.knowledge.sourcesOf(draft.chatbotId)).map((x) => x.sourceId));
    return {
      draft,
      tools: tools.map((t) => {
        const current = live.find((x) => x.toolId === t.toolId);
        const change = !current ? "added" : sameTool(current, t) ? "unchanged" : "changed";
        return { ...t, change };
      }),
      removedTools: live.filter((t) => !kept.has(t.toolId)),
      // A source removed from the chatbot since is no longer left out of anything.
      leftOutSources: (draft.leftOutSources ?? []).filter((id) => liveIds.has(id)),
      draftSources: (await this.d.knowledge.sourcesOf(draftKnowledgeKey(draft.chatbotId))).map((x) => ({
        ...x,
        chatbotId: draft.chatbotId,
      })),
    };
  }

  private async chatbot(caller: AccountCaller, chatbotId: string): Promise<ChatbotRecord> {
    const bot = await this.d.chatbots.byId(requireUuid("chatbot_id", chatbotId));
    // Another account's chatbot answers exactly as one that does not exist.
    if (!bot || bot.accountId !== caller.accountId) throw notFound("chatbot");
    return bot;
  }
}

/** A live tool as a draft holds it. */
function draftTool(t: ToolRecord): DraftToolRecord {
  return {
    toolId: t.toolId,
    name: t.name,
    description: t.description,
    parameters: t.parameters,
    url: t.url,
    method: t.method,
    timeoutMs: t.timeoutMs,
    requiresApproval: t.requiresApproval,
  };
}

function sameTool(a: ToolRecord, b: DraftToolRecord): boolean {
  return JSON.stringify(draftTool(a)) === JSON.stringify(draftTool({ ...a, ...b }));
}

/** The names of the calls a tool_calls record holds, with their arguments (what a replay compares). */
function callNames(toolCalls: string): string[] {
  if (!toolCalls) return [];
  try {
    const list = JSON.parse(toolCalls) as { name?: unknown }[];
    return Array.isArray(list) ? list.map((c) => String(c?.name ?? "")) : [];
  } catch {
    return [];
  }
}

function callsOf(toolCalls: string): string {
  if (!toolCalls) return "[]";
  try {
    const list = JSON.parse(toolCalls) as { name?: unknown; arguments?: unknown }[];
    return JSON.stringify(Array.isArray(list) ? list.map((c) => [c?.name, c?.arguments]) : []);
  } catch {
    return toolCalls;
  }
}

/** What differs between the live answer and the draft's. */
function differences(a: ReplayAnswer, b: ReplayAnswer): ReplayItem["differences"] {
  const out: ReplayItem["differences"] = [];
  if (a.content !== b.content) out.push("content");
  const docs = (x: ReplayAnswer) => JSON.stringify(x.documents.map((d) => [d.title, d.url, d.snippet]));
  if (docs(a) !== docs(b)) out.push("documents");
  if (callsOf(a.toolCalls) !== callsOf(b.toolCalls)) out.push("tool_calls");
  if (a.handover !== b.handover) out.push("handover");
  return out;
}
