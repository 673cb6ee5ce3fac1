import type { ChatbotRecord, KnowledgeSnippet } from "../domain/account/repository.js";
import {
  type Agent,
  type AgentContext,
  type AgentEvent,
  type AgentTurn,
  AgentUnavailableError,
  agentNameOf,
  RESULT_EXCERPT,
  type ReplyScope,
  type ToolCallOutcome,
  type ToolCallRecord,
} from "../domain/agent/agent.js";
import { rankSnippets } from "../domain/knowledge/matching.js";
import { fetchPost, type Post, type PostAnswer } from "./guarded-post.js";
import { parseSse } from "./sse.js";

/** Where the OpenAI-compatible endpoint is and which model to ask (AIAGENT_LLM_*). */
export interface OpenAiCompatibleSettings {
  /** Base URL without the trailing slash, e.g. https://api.openai.com/v1; `/chat/completions` is appended. */
  baseUrl: string;
  /** Sent as `Authorization: Bearer`; empty for local servers that need none. */
  apiKey: string;
  model: string;
  /** Upper bound for one whole reply. */
  timeoutMs?: number;
  /** How the request is sent; a chatbot's own endpoint in production goes only to public addresses. */
  post?: Post;
}

/** A tool call as OpenAI's chat-completions API reports it, assembled from its streamed pieces. */
interface ToolCall {
  id: string;
  type: string;
  function: { name: string; arguments: string };
}

interface ToolCallDelta {
  index?: number;
  id?: string;
  type?: string;
  function?: { name?: string; arguments?: string };
}

interface Chunk {
  choices?: { delta?: { content?: string | null; tool_calls?: ToolCallDelta[] }; finish_reason?: string | null }[];
  error?: { message?: string };
  usage?: { total_tokens?: number };
}

const MAX_SOURCES = 8;
const DEFAULT_TIMEOUT_MS = 120_000;
/** What the customer is told when the step or time bound stops a reply that still wanted tools. */
export const STEPS_EXHAUSTED =
  "I could not finish looking this up. A member of our team can follow up here if you need more help.";
/** What the customer is told while a tool call waits for a person's approval. */
export const AWAITING_APPROVAL = "A member of our team needs to approve this first; they will follow up here.";

/** The numbered sources the model is given, and the ones whose marker its reply contains. */
function citedSources(content: string, sources: KnowledgeSnippet[]): KnowledgeSnippet[] {
  return sources.filter((_, i) => content.includes(`[${i + 1}]`));
}

/**
 * The searched passages the reply cites by marker ([K1]), each once; all of them when it cites none by marker (its
 * answer was written from them).
 */
function citedPassages(content: string, searched: NonNullable<ToolCallOutcome["passages"]>): KnowledgeSnippet[] {
  const marked = searched.filter((p) => content.includes(p.marker));
  const seen = new Set<string>();
  return (marked.length > 0 ? marked : searched)
    .map((p) => p.document)
    .filter((d) => {
      const key = `${d.sourceId}\n${d.url}\n${d.snippet}`;
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    });
}

function systemPrompt(chatbot: ChatbotRecord, sources: KnowledgeSnippet[], instructions: string): string {
  const name = agentNameOf(chatbot);
  const lines = [
    name === chatbot.name
      ? `You are "${name}", a helpful customer support assistant. Answer briefly and politely, in the customer's language.`
      : `You are "${name}", a helpful customer support assistant of "${chatbot.name}". Answer briefly and politely, in the customer's language.`,
  ];
  if (instructions) lines.push("Your instructions from the business (follow them):", instructions);
  if (sources.length > 0) {
    lines.push(
      "Answer from these sources when they are relevant, and cite each source you use with its marker, e.g. [1]. Say " +
        "so when they do not cover the question.",
    );
    for (const [i, s] of sources.entries()) lines.push(`[${i + 1}] ${s.title}: ${s.snippet}`);
  }
  return lines.join("\n");
}

/** A message of the chat-completions request. */
type UpstreamMessage =
  | { role: "system" | "user"; content: string }
  | { role: "assistant"; content: string | null; tool_calls?: ToolCall[] }
  | { role: "tool"; tool_call_id: string; content: string };

/** An entry of a stored `tool_calls` record, as read (older records hold OpenAI's own shape). */
interface StoredCall {
  id?: unknown;
  name?: unknown;
  arguments?: unknown;
  status?: unknown;
  result?: unknown;
  duration_ms?: unknown;
  function?: { name?: unknown; arguments?: unknown };
}

/** A stored `tool_calls` record as a list of calls with their outcomes (older records: the raw calls, not run). */
function storedCalls(text: string | undefined): ToolCallRecord[] {
  if (!text) return [];
  try {
    const list = JSON.parse(text) as unknown;
    if (!Array.isArray(list)) return [];
    return list.flatMap((c: StoredCall) => {
      const name = typeof c?.name === "string" ? c.name : c?.function?.name;
      const args = typeof c?.arguments === "string" ? c.arguments : c?.function?.arguments;
      if (typeof c?.id !== "string" || typeof name !== "string") return [];
      return [
        {
          id: c.id,
          name,
          arguments: typeof args === "string" ? args : "{}",
          status: (c.status ?? "not_run") as ToolCallRecord["status"],
          result: typeof c.result === "string" ? c.result : "",
          duration_ms: Number(c.duration_ms ?? 0),
        },
      ];
    });
  } catch {
    return [];
  }
}

/** The conversation as the model reads it: each assistant turn with the tool calls it made and their results. */
function upstreamHistory(history: AgentTurn[]): UpstreamMessage[] {
  const out: UpstreamMessage[] = [];
  // A call that waited for approval is recorded again, decided, by the reply that carried on after the decision: the
  // model is told of it once, there.
  const decided = new Set(
    history.flatMap((t) =>
      storedCalls(t.toolCalls)
        .filter((c) => c.status !== "awaiting_approval")
        .map((c) => c.id),
    ),
  );
  for (const t of history) {
    // Operators speak for the business, as the assistant does.
    if (t.role === "user") {
      out.push({ role: "user", content: t.content });
      continue;
    }
    const calls = storedCalls(t.toolCalls).filter((c) => c.status !== "awaiting_approval" || !decided.has(c.id));
    if (calls.length > 0) {
      out.push({
        role: "assistant",
        content: null,
        tool_calls: calls.map((c) => ({
          id: c.id,
          type: "function",
          function: { name: c.name, arguments: c.arguments },
        })),
      });
      for (const c of calls)
        out.push({ role: "tool", tool_call_id: c.id, content: c.result || `(the call ended: ${c.status})` });
      // A turn of calls alone (the one a decision carries on from) has no text of its own.
      if (t.content === "") continue;
    }
    out.push({ role: "assistant", content: t.content });
  }
  return out;
}

/** One model call's outcome. */
interface Completion {
  content: string;
  calls: ToolCall[];
  tokens: number;
}

/**
 * The agent backed by any OpenAI-compatible chat-completions endpoint, streamed over server-sent events. Given tools,
 * it runs the loop: the model's tool calls are run (a step's calls at once), their results sent back as `tool`
 * messages, and the model asked again, up to the context's step and time bounds; each call and its outcome is
 * recorded in the reply's `tool_calls`.
 */
export class OpenAiCompatibleAgent implements Agent {
  constructor(private readonly s: OpenAiCompatibleSettings) {}

  async *reply(
    chatbot: ChatbotRecord,
    history: AgentTurn[],
    signal: AbortSignal,
    _scope?: ReplyScope,
    ctx?: AgentContext,
  ): AsyncIterable<AgentEvent> {
    const question = [...history].reverse().find((t) => t.role === "user")?.content ?? "";
    const sources =
      chatbot.knowledge.length <= MAX_SOURCES
        ? chatbot.knowledge
        : rankSnippets(question, chatbot.knowledge).slice(0, MAX_SOURCES);
    const messages: UpstreamMessage[] = [
      { role: "system", content: systemPrompt(chatbot, sources, ctx?.instructions ?? "") },
      ...upstreamHistory(history),
    ];
    const tools = ctx?.tools ?? [];
    const records: ToolCallRecord[] = [];
    // The passages search_knowledge gave the model, by marker.
    const searched: NonNullable<ToolCallOutcome["passages"]> = [];
    const texts: string[] = [];
    let tokens = 0;
    let handover: string | undefined;
    try {
      for (let step = 1; ; step++) {
        const turn: Completion = yield* this.complete(messages, tools, signal);
        tokens += turn.tokens;
        if (turn.content.trim() !== "") texts.push(turn.content);
        const calls = turn.calls.map((c, i) => ({ ...c, id: c.id || `call_${step}_${i + 1}` }));
        if (calls.length === 0) break;
        if (!ctx || step >= ctx.maxSteps || ctx.now() >= ctx.deadline) {
          for (const c of calls)
            records.push({
              id: c.id,
              name: c.function.name,
              arguments: c.function.arguments,
              status: "not_run",
              result: "",
              duration_ms: 0,
            });
          if (ctx) texts.push(STEPS_EXHAUSTED);
          break;
        }
        messages.push({ role: "assistant", content: turn.content || null, tool_calls: calls });
        yield { type: "activity", activity: "looking_up" };
        const left = AbortSignal.timeout(Math.max(1, ctx.deadline - ctx.now()));
        const outcomes = await Promise.all(
          calls.map((c) =>
            ctx.runTool(
              { id: c.id, name: c.function.name, arguments: c.function.arguments },
              AbortSignal.any([signal, left]),
            ),
          ),
        );
        if (signal.aborted) return;
        let stop: "handover" | "approval" | undefined;
        for (const [i, o] of outcomes.entries()) {
          const c = calls[i]!;
          records.push({
            id: c.id,
            name: c.function.name,
            arguments: c.function.arguments,
            status: o.status,
            result: o.result.slice(0, RESULT_EXCERPT),
            duration_ms: o.durationMs,
          });
          messages.push({ role: "tool", tool_call_id: c.id, content: o.result });
          if (o.passages) searched.push(...o.passages);
          if (o.stop?.handover) {
            handover = o.stop.handover;
            stop = "handover";
          } else if (o.stop?.approval && stop === undefined) stop = "approval";
        }
        if (stop === "handover") break;
        if (stop === "approval") {
          texts.push(AWAITING_APPROVAL);
          break;
        }
      }
    } catch (e) {
      // The caller went away: nothing to report to anyone.
      if (signal.aborted) return;
      throw e instanceof AgentUnavailableError
        ? e
        : new AgentUnavailableError(`chat completions request failed: ${(e as Error).message}`, { cause: e });
    }
    const content = texts.join("\n\n");
    yield {
      type: "done",
      content,
      documents: [...citedSources(content, sources), ...citedPassages(content, searched)],
      toolCalls: records.length > 0 ? JSON.stringify(records) : "",
      ...(tokens > 0 ? { tokens } : {}),
      ...(handover ? { handover } : {}),
    };
  }

  /** One streamed model call: its text is yielded as it comes; the whole text, tool calls and tokens returned. */
  private async *complete(
    messages: UpstreamMessage[],
    tools: AgentContext["tools"],
    signal: AbortSignal,
  ): AsyncGenerator<AgentEvent, Completion> {
    const body = {
      model: this.s.model,
      stream: true,
      stream_options: { include_usage: true },
      messages,
      ...(tools.length > 0
        ? {
            tools: tools.map((t) => ({
              type: "function",
              function: { name: t.name, description: t.description, parameters: t.parameters },
            })),
          }
        : {}),
    };
    const headers: Record<string, string> = { "content-type": "application/json", accept: "text/event-stream" };
    if (this.s.apiKey) headers.authorization = `Bearer ${this.s.apiKey}`;
    let content = "";
    let tokens = 0;
    const calls: ToolCall[] = [];
    const res = await (this.s.post ?? fetchPost)(
      `${this.s.baseUrl}/chat/completions`,
      headers,
      JSON.stringify(body),
      AbortSignal.any([signal, AbortSignal.timeout(this.s.timeoutMs ?? DEFAULT_TIMEOUT_MS)]),
    );
    if (!res.ok || !res.body)
      throw new AgentUnavailableError(`chat completions answered HTTP ${res.status}: ${await upstreamMessage(res)}`);
    let finished = false;
    for await (const ev of parseSse(res.body)) {
      if (ev.data === "[DONE]") {
        finished = true;
        break;
      }
      let chunk: Chunk;
      try {
        chunk = JSON.parse(ev.data) as Chunk;
      } catch {
        throw new AgentUnavailableError("chat completions sent an event that is not JSON");
      }
      if (chunk.error)
        throw new AgentUnavailableError(
          `chat completions failed mid-stream: ${String(chunk.error.message ?? "unknown error").slice(0, 200)}`,
        );
      const used = chunk.usage?.total_tokens;
      if (typeof used === "number" && Number.isFinite(used) && used > 0) tokens = used;
      const choice = chunk.choices?.[0];
      if (!choice) continue;
      const text = choice.delta?.content;
      if (typeof text === "string" && text !== "") {
        content += text;
        yield { type: "delta", text };
      }
      for (const d of choice.delta?.tool_calls ?? []) addToolCallDelta(calls, d);
      if (choice.finish_reason) finished = true;
    }
    if (!finished) throw new AgentUnavailableError("chat completions stream ended before the reply was complete");
    return { content, calls: calls.filter((c) => c !== undefined), tokens };
  }
}

/** Streamed tool calls arrive in pieces keyed by index: the first names it, later ones extend its arguments. */
function addToolCallDelta(calls: ToolCall[], d: ToolCallDelta): void {
  const i = d.index ?? calls.length;
  if (!Number.isInteger(i) || i < 0 || i > 64)
    throw new AgentUnavailableError("chat completions sent a tool call with a bad index");
  const call = (calls[i] ??= { id: "", type: "function", function: { name: "", arguments: "" } });
  if (d.id) call.id = d.id;
  if (d.type) call.type = d.type;
  if (d.function?.name) call.function.name += d.function.name;
  if (d.function?.arguments) call.function.arguments += d.function.arguments;
}

/** A short, single-line excerpt of an upstream error body, for the log. */
async function upstreamMessage(res: PostAnswer): Promise<string> {
  try {
    const text = (await res.text()).slice(0, 2000);
    try {
      const j = JSON.parse(text) as { error?: { message?: string } };
      if (j.error?.message) return j.error.message.slice(0, 200);
    } catch {
      // not JSON: fall through to the raw text
    }
    return text.replace(/\s+/g, " ").slice(0, 200) || res.statusText;
  } catch {
    return res.statusText;
  }
}
