import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** A request the stand-in received. */
export interface LlmRequest {
  path: string;
  authorization: string | undefined;
  /** The W3C trace context the service sent along (with traces on). */
  traceparent: string | undefined;
  body: {
    model: string;
    stream: boolean;
    messages: {
      role: string;
      content: string | null;
      tool_call_id?: string;
      tool_calls?: { id: string; type: string; function: { name: string; arguments: string } }[];
    }[];
    tools?: { type: string; function: { name: string; description: string; parameters: object } }[];
  };
}

/** Answers one request; the test sets it per case. */
export type LlmBehaviour = (req: LlmRequest, res: ServerResponse) => Promise<void> | void;

/** A local HTTP server speaking the chat-completions streaming protocol, in place of a paid LLM API. */
export interface LlmStandIn {
  url: string;
  requests: LlmRequest[];
  behave(b: LlmBehaviour): void;
  close(): Promise<void>;
}

/** One streamed chunk carrying a piece of the reply text. */
export function contentChunk(text: string, finish: string | null = null): object {
  return {
    id: "chatcmpl-1",
    object: "chat.completion.chunk",
    model: "stand-in",
    choices: [{ index: 0, delta: { content: text }, finish_reason: finish }],
  };
}

/** Writes the SSE response head. */
export function startSse(res: ServerResponse): void {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
}

/** Writes one event (`data: …` and a blank line). */
export function sendEvent(res: ServerResponse, data: object | string): void {
  res.write(`data: ${typeof data === "string" ? data : JSON.stringify(data)}\n\n`);
}

/** A whole streamed reply: a role chunk, the pieces, a finish chunk and [DONE]. */
export function streamReply(pieces: string[]): LlmBehaviour {
  return (_req, res) => {
    startSse(res);
    sendEvent(res, { choices: [{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null }] });
    for (const p of pieces) sendEvent(res, contentChunk(p));
    sendEvent(res, { choices: [{ index: 0, delta: {}, finish_reason: "stop" }] });
    sendEvent(res, "[DONE]");
    res.end();
  };
}

/** One scripted model turn: text pieces, then tool calls (each streamed in two pieces), and the tokens it reports. */
export interface ScriptedTurn {
  text?: string[];
  toolCalls?: { id: string; name: string; arguments: string }[];
  tokens?: number;
}

/** The commonest script: one tool call, then the final answer once the model has its result. */
export function oneCallThen(call: { id: string; name: string; arguments: string }, answer: string): LlmBehaviour {
  return scripted([{ toolCalls: [call] }, { text: [answer] }]);
}

/**
 * Answers the nth request with the nth turn of the script (the last one again once the script is used up), streamed
 * as OpenAI does: text deltas, tool calls in pieces keyed by index, a finish chunk (tool_calls or stop), a usage
 * chunk, [DONE].
 */
export function scripted(turns: ScriptedTurn[]): LlmBehaviour {
  let n = 0;
  return (_req, res) => {
    const turn = turns[Math.min(n++, turns.length - 1)]!;
    startSse(res);
    sendEvent(res, { choices: [{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null }] });
    for (const p of turn.text ?? []) sendEvent(res, contentChunk(p));
    for (const [index, c] of (turn.toolCalls ?? []).entries()) {
      const cut = Math.floor(c.arguments.length / 2);
      sendEvent(res, {
        choices: [
          {
            index: 0,
            delta: {
              tool_calls: [
                { index, id: c.id, type: "function", function: { name: c.name, arguments: c.arguments.slice(0, cut) } },
              ],
            },
            finish_reason: null,
          },
        ],
      });
      sendEvent(res, {
        choices: [
          {
            index: 0,
            delta: { tool_calls: [{ index, function: { arguments: c.arguments.slice(cut) } }] },
            finish_reason: null,
          },
        ],
      });
    }
    const finish = (turn.toolCalls ?? []).length > 0 ? "tool_calls" : "stop";
    sendEvent(res, { choices: [{ index: 0, delta: {}, finish_reason: finish }] });
    if (turn.tokens)
      sendEvent(res, { choices: [], usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: turn.tokens } });
    sendEvent(res, "[DONE]");
    res.end();
  };
}

/** Starts the stand-in on a free loopback port; its base URL ends in /v1 like OpenAI's. */
export async function startLlmStandIn(): Promise<LlmStandIn> {
  const requests: LlmRequest[] = [];
  let behaviour: LlmBehaviour = streamReply(["Hello."]);
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const r: LlmRequest = {
        path: req.url ?? "",
        authorization: req.headers.authorization,
        traceparent: req.headers.traceparent as string | undefined,
        body: JSON.parse(Buffer.concat(chunks).toString("utf8")) as LlmRequest["body"],
      };
      requests.push(r);
      if (r.path !== "/v1/chat/completions") {
        res.writeHead(404).end();
        return;
      }
      void Promise.resolve(behaviour(r, res)).catch(() => res.destroy());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    behave: (b) => {
      behaviour = b;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
