import type { Sealer } from "../account/chatbot-rules.js";
import type { ChatbotRecord } from "../account/repository.js";
import type { Clock } from "../clock.js";
import { newId } from "../ids.js";
import type { KnowledgeView, ReplySources } from "../knowledge/knowledge-service.js";
import type { Passage } from "../knowledge/scoring.js";
import type {
  Agent,
  AgentContext,
  AgentEvent,
  AgentReads,
  AgentTool,
  AgentTurn,
  PreparedReply,
  ReplyScope,
  ToolCallOutcome,
  ToolCallRecord,
  ToolCallRequest,
  ToolCallStatus,
} from "./agent.js";
import { RESULT_EXCERPT } from "./agent.js";
import { dontKnowStreak, handoverMessage, handoverRequest, isDontKnow } from "./handover-rules.js";
import { citation, type SearchPassages } from "./offline-agent.js";
import {
  type AgentRepository,
  type AgentSettingsRecord,
  argumentValidator,
  defaultSettings,
  type ToolRecord,
  toolSecretBinding,
  utcDay,
} from "./tools.js";

/** A tool call as sent to the client's server: the tool, its arguments, and whom it is for as the service verified. */
export interface ToolEnvelope {
  tool: string;
  call_id: string;
  chatbot_id: string;
  conversation_id: string;
  user_id: string;
  arguments: unknown;
}

/** What the director needs. */
export interface DirectorDeps {
  agents: Pick<AgentRepository, "settings" | "tools" | "handover" | "tokensUsed" | "addTokens">;
  sealer: Sealer;
  clock: Clock;
  /** Calls a tool's URL (signed, SSRF-guarded, bounded). */
  callTool(
    target: { url: string; method: "POST" | "GET"; timeoutMs: number; secret: string },
    envelope: ToolEnvelope,
    signal: AbortSignal,
  ): Promise<{ status: ToolCallStatus; text: string }>;
  /** True when the chatbot's replies call a model (the budget applies to those only). */
  usesModel(chatbot: ChatbotRecord): boolean;
  /** Model tokens a chatbot may use per day unless its settings say otherwise (0: no limit). */
  defaultDailyTokens: number;
  /** Model calls per reply at most. */
  maxSteps: number;
  /** Time one reply may take at most, tool calls included, in ms. */
  maxReplyMs: number;
  /**
   * The chatbot's passages for a question above the answer threshold, best first (KnowledgeService.searchKnowledge);
   * with a view, a draft's knowledge sources instead of the live ones; with `sources`, those listed there.
   */
  searchKnowledge?: SearchPassages;
  /**
   * The chatbot's (or, with a view, its draft's) knowledge sources, read once per reply (KnowledgeService.sourcesFor):
   * with any, the model is offered search_knowledge; the searches and the built-in agent take them from the context.
   */
  sources?: (chatbotId: string, view?: KnowledgeView) => Promise<ReplySources>;
  /** `sources` without a view, read from `knowledge` (a unit of work's: Agent.prepare); absent: `sources` is asked. */
  sourcesIn?: (knowledge: AgentReads["knowledge"], chatbotId: string) => Promise<ReplySources>;
}

/** The built-in tool every model is offered: hand the conversation to the team. */
export const HANDOVER_TOOL: AgentTool = {
  name: "handover",
  description:
    "Hand the conversation over to a person of the support team: when the customer asks for a person, or when you " +
    "cannot help them. Say briefly why.",
  parameters: { type: "object", properties: { reason: { type: "string", description: "Why, in a few words" } } },
};

/** The most passages one search_knowledge call answers, and the characters of each passage's text sent. */
export const SEARCH_TOOL_LIMIT = { default: 4, max: 8 };
const PASSAGE_CHARS = 1500;

/** The built-in tool offered when the chatbot has knowledge sources: search them (as the built-in agent does). */
export const SEARCH_KNOWLEDGE_TOOL: AgentTool = {
  name: "search_knowledge",
  description:
    "Search the business's knowledge (its help pages, documents and sites) for passages that answer a question. " +
    "Answer from the passages found and cite each one you use with its marker, e.g. [K1]. When none is found, say " +
    "that you do not know rather than guessing.",
  parameters: {
    type: "object",
    properties: {
      query: { type: "string", minLength: 1, maxLength: 500, description: "The question, in the customer's words" },
      limit: {
        type: "integer",
        minimum: 1,
        maximum: SEARCH_TOOL_LIMIT.max,
        description: `The most passages (${SEARCH_TOOL_LIMIT.default} when left out)`,
      },
    },
    required: ["query"],
    additionalProperties: false,
  },
};
const SEARCH_SCHEMA = JSON.stringify(SEARCH_KNOWLEDGE_TOOL.parameters);

/** What is done instead of a reply: the conversation waits for a person, so the agent stays quiet. */
export const SILENT = "silent";

/**
 * The agent as a chatbot's owner configured it, around the agent that writes the replies: the handover rules that
 * need no model (a customer asking for a person, the client's words, "I don't know" answers in a row, the daily
 * model budget), the owner's instructions, and the chatbot's tools with how each call is run (arguments checked
 * against the tool's schema before anything is sent; the identity from the verified token, never from the model).
 */
export class DirectedAgent implements Agent {
  constructor(
    private readonly inner: Agent,
    private readonly d: DirectorDeps,
  ) {}

  async *reply(
    chatbot: ChatbotRecord,
    history: AgentTurn[],
    signal: AbortSignal,
    scope?: ReplyScope,
  ): AsyncIterable<AgentEvent> {
    if (!scope) {
      yield* this.inner.reply(chatbot, history, signal);
      return;
    }
    const now = this.d.clock.now();
    const view = scope.replay?.knowledge;
    const [stored, tools, waiting, sources] = await (scope.prepared && !scope.replay
      ? scope.prepared
      : Promise.all([
          this.d.agents.settings(chatbot.chatbotId),
          scope.replay?.tools ?? this.d.agents.tools(chatbot.chatbotId),
          scope.replay ? undefined : this.d.agents.handover(scope.conversationId),
          this.d.searchKnowledge && this.d.sources ? this.d.sources(chatbot.chatbotId, view) : undefined,
        ]));
    // Handed over: the team answers; the agent says nothing more until a person releases the conversation.
    if (waiting) {
      yield { type: "done", content: "", documents: [], toolCalls: "", handover: SILENT };
      return;
    }
    const settings = { ...(stored ?? defaultSettings(chatbot)) };
    if (scope.replay) settings.instructions = scope.replay.instructions;
    // A person decided on a call that waited: it runs (or not), and the model carries on from its outcome.
    if (scope.decision) {
      // Approved, the call runs now: the customer sees the looking-up line meanwhile (never what it sends).
      if (scope.decision.approved) yield { type: "activity", activity: "looking_up" };
      const resumed = await this.decided(chatbot, tools, scope, history, signal);
      if (resumed)
        yield* this.carryOn(chatbot, resumed.history, signal, scope, settings, tools, now, sources, resumed.record);
      return;
    }
    const question = [...history].reverse().find((t) => t.role === "user")?.content ?? "";
    const asked = handoverRequest(question, settings.handoverPhrases);
    if (asked) {
      yield handingOver(handoverMessage(chatbot, now, asked.language), asked.reason);
      return;
    }
    if (this.d.usesModel(chatbot) && !scope.replay) {
      const budget = settings.dailyTokenBudget || this.d.defaultDailyTokens;
      if (budget > 0 && (await this.d.agents.tokensUsed(chatbot.chatbotId, utcDay(now))) >= budget) {
        yield handingOver(handoverMessage(chatbot, now), "the chatbot's daily model budget is used up");
        return;
      }
    }
    yield* this.carryOn(chatbot, history, signal, scope, settings, tools, now, sources);
  }

  /** The four reads `reply` begins with, made on `reads` (the customer's message's unit of work). */
  prepare(reads: AgentReads, chatbotId: string, conversationId: string): Promise<PreparedReply> {
    const d = this.d;
    return Promise.all([
      reads.agents.settings(chatbotId),
      reads.agents.tools(chatbotId),
      reads.agents.handover(conversationId),
      d.searchKnowledge && d.sources
        ? d.sourcesIn
          ? d.sourcesIn(reads.knowledge, chatbotId)
          : d.sources(chatbotId)
        : undefined,
    ]);
  }

  /** The inner agent's reply under the chatbot's rules; a decided call, when given, heads its tool_calls record. */
  private async *carryOn(
    chatbot: ChatbotRecord,
    history: AgentTurn[],
    signal: AbortSignal,
    scope: ReplyScope,
    settings: AgentSettingsRecord,
    tools: ToolRecord[],
    now: number,
    sources: ReplySources | undefined,
    decided?: ToolCallRecord,
  ): AsyncIterable<AgentEvent> {
    const context = this.context(chatbot, tools, settings.instructions, scope, now, sources);
    for await (const inner of this.inner.reply(chatbot, history, signal, scope, context)) {
      if (inner.type !== "done") {
        yield inner;
        continue;
      }
      const ev = decided ? { ...inner, toolCalls: withDecided(decided, inner.toolCalls) } : inner;
      if (ev.tokens && ev.tokens > 0) await this.d.agents.addTokens(chatbot.chatbotId, utcDay(now), ev.tokens);
      if (ev.handover) {
        yield { ...ev, content: ev.content.trim() || handoverMessage(chatbot, this.d.clock.now()) };
        return;
      }
      const limit = settings.dontKnowLimit;
      if (limit > 0 && isDontKnow(ev.content) && dontKnowStreak(history) + 1 >= limit) {
        yield {
          ...ev,
          content: `${ev.content}\n\n${handoverMessage(chatbot, this.d.clock.now())}`,
          handover: `${limit} answers in a row were "I don't know"`,
        };
        return;
      }
      yield ev;
      return;
    }
  }

  /**
   * The call a person decided on, run when approved (its arguments checked again), and the history the model carries
   * on from: the whole conversation up to now (what the customer wrote while the call waited included), then the
   * decided call as a step of its own with its outcome. Undefined when no reply of the history holds such a waiting
   * call.
   */
  private async decided(
    chatbot: ChatbotRecord,
    tools: ToolRecord[],
    scope: ReplyScope,
    history: AgentTurn[],
    signal: AbortSignal,
  ): Promise<{ record: ToolCallRecord; history: AgentTurn[] } | undefined> {
    const decision = scope.decision!;
    const isWaiting = (c: ToolCallRecord) => c.id === decision.callId && c.status === "awaiting_approval";
    const waiting = history
      .filter((t) => t.role === "assistant")
      .flatMap((t) => parseRecords(t.toolCalls))
      .findLast(isWaiting);
    if (!waiting) return undefined;
    const request = { id: waiting.id, name: waiting.name, arguments: waiting.arguments };
    const outcome = decision.approved
      ? await this.run(
          chatbot,
          new Map(tools.map((t) => [t.name, t])),
          scope,
          request,
          AbortSignal.any([signal, AbortSignal.timeout(this.d.maxReplyMs)]),
          true,
        )
      : {
          status: "refused" as const,
          result:
            "A person of the team refused this call; it was not made. Tell the customer, and do not make up its result.",
          durationMs: 0,
        };
    const record: ToolCallRecord = {
      ...request,
      status: outcome.status,
      result: outcome.result.slice(0, RESULT_EXCERPT),
      duration_ms: outcome.durationMs,
    };
    // The model is told the whole result once (the record keeps an excerpt), as a step after all that was said: the
    // waiting reply's record of the call is left out of what it is shown (openai-compatible.ts, upstreamHistory).
    const told = { ...record, result: outcome.result };
    return {
      record,
      history: [...history, { role: "assistant", content: "", toolCalls: JSON.stringify([told]) }],
    };
  }

  /** The tools offered to the model, and how each call is run. */
  private context(
    chatbot: ChatbotRecord,
    tools: ToolRecord[],
    instructions: string,
    scope: ReplyScope,
    now: number,
    sources: ReplySources | undefined,
  ): AgentContext {
    const searchable = !!sources?.any;
    const byName = new Map(tools.map((t) => [t.name, t]));
    // The passages this reply's searches gave the model, numbered across its calls: [K1], [K2]…
    const cited = { count: 0 };
    const offered: AgentTool[] = [
      HANDOVER_TOOL,
      ...(searchable ? [SEARCH_KNOWLEDGE_TOOL] : []),
      ...tools.map((t) => ({
        name: t.name,
        description: t.description,
        parameters: JSON.parse(t.parameters) as Record<string, unknown>,
      })),
    ];
    return {
      tools: offered,
      instructions,
      maxSteps: this.d.maxSteps,
      deadline: now + this.d.maxReplyMs,
      now: () => this.d.clock.now(),
      runTool: (call, signal) =>
        searchable && call.name === SEARCH_KNOWLEDGE_TOOL.name
          ? this.search(chatbot, call, cited, scope.replay?.knowledge, sources)
          : this.run(chatbot, byName, scope, call, signal),
      ...(sources ? { sources } : {}),
    };
  }

  private search(
    chatbot: ChatbotRecord,
    call: ToolCallRequest,
    cited: { count: number },
    view: KnowledgeView | undefined,
    sources: ReplySources | undefined,
  ): Promise<ToolCallOutcome> {
    const search = this.d.searchKnowledge!;
    return searchCall((c, q, n) => search(c, q, n, view, sources), chatbot, call, cited);
  }

  private async run(
    chatbot: ChatbotRecord,
    tools: Map<string, ToolRecord>,
    scope: ReplyScope,
    call: ToolCallRequest,
    signal: AbortSignal,
    approved = false,
  ): Promise<ToolCallOutcome> {
    const started = Date.now();
    const ended = (status: ToolCallStatus, result: string, stop?: ToolCallOutcome["stop"]): ToolCallOutcome => ({
      status,
      result,
      durationMs: Date.now() - started,
      ...(stop ? { stop } : {}),
    });
    let args: unknown;
    try {
      args = call.arguments.trim() === "" ? {} : JSON.parse(call.arguments);
    } catch {
      return ended(
        "invalid_arguments",
        "The arguments were not JSON; nothing was sent. Call the tool again with JSON.",
      );
    }
    if (call.name === HANDOVER_TOOL.name) {
      const why = typeof (args as { reason?: unknown })?.reason === "string" ? (args as { reason: string }).reason : "";
      return ended("succeeded", "The conversation is handed over to the team.", {
        handover: `the agent handed over${why ? `: ${why.slice(0, 200)}` : ""}`,
      });
    }
    const tool = tools.get(call.name);
    if (!tool) return ended("unknown_tool", `There is no tool named ${call.name}; nothing was sent.`);
    const validate = argumentValidator(tool.parameters);
    if (!validate(args))
      return ended(
        "invalid_arguments",
        `The arguments do not match the tool's schema (${(validate.errors ?? [])
          .slice(0, 3)
          .map((e) => `${e.instancePath || "/"} ${e.message ?? "is invalid"}`)
          .join("; ")}); nothing was sent.`,
      );
    if (tool.requiresApproval && !approved)
      return ended(
        "awaiting_approval",
        "A person of the team must approve this call before it runs; tell the customer the team will follow up.",
        { approval: true },
      );
    // A replay calls nothing: the record says what would have been sent where.
    if (scope.replay)
      return ended(
        "dry_run",
        `Replay: the call was not made (it would have been ${tool.method} ${tool.url}). Answer as if its result were unknown.`,
      );
    const secret = this.d.sealer.open(tool.secretSealed, toolSecretBinding(tool.toolId));
    const answer = await this.d.callTool(
      { url: tool.url, method: tool.method, timeoutMs: tool.timeoutMs, secret },
      {
        tool: tool.name,
        call_id: call.id || `call_${newId()}`,
        chatbot_id: chatbot.chatbotId,
        conversation_id: scope.conversationId,
        user_id: scope.userId,
        arguments: args,
      },
      signal,
    );
    return ended(
      answer.status,
      answer.status === "succeeded" ? answer.text : `The call failed: ${answer.text}. Do not make up its result.`,
    );
  }
}

/** search_knowledge: the arguments checked against its schema, then the chatbot's passages with their provenance. */
async function searchCall(
  search: (chatbot: ChatbotRecord, query: string, limit: number) => Promise<Passage[]>,
  chatbot: ChatbotRecord,
  call: ToolCallRequest,
  cited: { count: number },
): Promise<ToolCallOutcome> {
  const started = Date.now();
  const ended = (status: ToolCallStatus, result: string, passages?: ToolCallOutcome["passages"]): ToolCallOutcome => ({
    status,
    result,
    durationMs: Date.now() - started,
    ...(passages ? { passages } : {}),
  });
  let args: { query?: unknown; limit?: unknown };
  try {
    args = call.arguments.trim() === "" ? {} : JSON.parse(call.arguments);
  } catch {
    return ended("invalid_arguments", "The arguments were not JSON. Call search_knowledge again with JSON.");
  }
  const validate = argumentValidator(SEARCH_SCHEMA);
  if (!validate(args) || typeof args.query !== "string" || args.query.trim() === "")
    return ended(
      "invalid_arguments",
      `The arguments do not match search_knowledge's schema (${
        (validate.errors ?? [])
          .slice(0, 3)
          .map((e) => `${e.instancePath || "/"} ${e.message ?? "is invalid"}`)
          .join("; ") || "/query must not be empty"
      }); nothing was searched.`,
    );
  const limit = typeof args.limit === "number" ? args.limit : SEARCH_TOOL_LIMIT.default;
  const found = await search(chatbot, args.query, limit);
  if (found.length === 0)
    return ended(
      "succeeded",
      JSON.stringify({
        passages: [],
        note: "No passage of the knowledge answers this. Say that you do not know; do not make up an answer.",
      }),
      [],
    );
  const passages = found.map((p) => ({ marker: `[K${++cited.count}]`, document: citation(p), p }));
  return ended(
    "succeeded",
    JSON.stringify({
      passages: passages.map(({ marker, p }) => ({
        cite_as: marker,
        source_id: p.sourceId,
        title: p.title,
        ...(p.headingPath ? { heading_path: p.headingPath } : {}),
        url: p.anchorUrl,
        score: Math.round(p.score * 1000) / 1000,
        text: p.text.length > PASSAGE_CHARS ? `${p.text.slice(0, PASSAGE_CHARS)}…` : p.text,
      })),
    }),
    passages.map(({ marker, document }) => ({ marker, document })),
  );
}

/** A stored tool_calls record's entries (none when it is empty or not a list). */
function parseRecords(text: string | undefined): ToolCallRecord[] {
  if (!text) return [];
  try {
    const list = JSON.parse(text) as unknown;
    return Array.isArray(list) ? (list as ToolCallRecord[]).filter((c) => typeof c?.id === "string") : [];
  } catch {
    return [];
  }
}

/** The record of a reply that carried on after a decision: the decided call first, then the reply's own calls. */
function withDecided(decided: ToolCallRecord, toolCalls: string): string {
  return JSON.stringify([decided, ...parseRecords(toolCalls)]);
}

function handingOver(content: string, reason: string): AgentEvent {
  return { type: "done", content, documents: [], toolCalls: "", handover: reason };
}
