import type { ChatbotRecord, KnowledgeSnippet } from "../domain/account/repository.js";
import { type Agent, type AgentEvent, type AgentTurn, AgentUnavailableError } from "../domain/agent/agent.js";
import { rankSnippets } from "../domain/agent/matching.js";
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
}

const MAX_SOURCES = 8;
const DEFAULT_TIMEOUT_MS = 120_000;

/** The numbered sources the model is given, and the ones whose marker its reply contains. */
function citedSources(content: string, sources: KnowledgeSnippet[]): KnowledgeSnippet[] {
  return sources.filter((_, i) => content.includes(`[${i + 1}]`));
}

function systemPrompt(chatbot: ChatbotRecord, sources: KnowledgeSnippet[]): string {
  const lines = [`You are "${chatbot.name}", a helpful customer support assistant. Answer briefly and politely.`];
  if (sources.length > 0) {
    lines.push(
      "Answer from these sources when they are relevant, and cite each source you use with its marker, e.g. [1]. Say " +
        "so when they do not cover the question.",
    );
    for (const [i, s] of sources.entries()) lines.push(`[${i + 1}] ${s.title}: ${s.snippet}`);
  }
  return lines.join("\n");
}

function upstreamRole(role: AgentTurn["role"]): "user" | "assistant" {
  // Operators speak for the business, as the assistant does.
  return role === "user" ? "user" : "assistant";
}

/** The agent backed by any OpenAI-compatible chat-completions endpoint, streamed over server-sent events. */
export class OpenAiCompatibleAgent implements Agent {
  constructor(private readonly s: OpenAiCompatibleSettings) {}

  async *reply(chatbot: ChatbotRecord, history: AgentTurn[], signal: AbortSignal): AsyncIterable<AgentEvent> {
    const question = [...history].reverse().find((t) => t.role === "user")?.content ?? "";
    const sources =
      chatbot.knowledge.length <= MAX_SOURCES
        ? chatbot.knowledge
        : rankSnippets(question, chatbot.knowledge).slice(0, MAX_SOURCES);
    const body = {
      model: this.s.model,
      stream: true,
      messages: [
        { role: "system", content: systemPrompt(chatbot, sources) },
        ...history.map((t) => ({ role: upstreamRole(t.role), content: t.content })),
      ],
    };
    const headers: Record<string, string> = { "content-type": "application/json", accept: "text/event-stream" };
    if (this.s.apiKey) headers.authorization = `Bearer ${this.s.apiKey}`;
    let content = "";
    const calls: ToolCall[] = [];
    try {
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
    } catch (e) {
      // The caller went away: nothing to report to anyone.
      if (signal.aborted) return;
      throw e instanceof AgentUnavailableError
        ? e
        : new AgentUnavailableError(`chat completions request failed: ${(e as Error).message}`, { cause: e });
    }
    yield { type: "done", content, documents: citedSources(content, sources), toolCalls: toolCallsJson(calls) };
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

/** The tool calls as JSON text, "" when there were none (holes left by skipped indexes dropped). */
function toolCallsJson(calls: ToolCall[]): string {
  const present = calls.filter((c) => c !== undefined);
  return present.length > 0 ? JSON.stringify(present) : "";
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
