import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type LlmStandIn, startLlmStandIn } from "../frame/llm-stand-in.js";
import { postJson } from "../helpers/http.js";
import { freePort } from "../helpers/ports.js";
import { scaled } from "../helpers/time-scale.js";

// `aiagent serve` with the standard OTEL_* variables sends its spans over OTLP/HTTP (JSON) to a receiver in this
// process; one request's span tree is checked: the caller's traceparent is its parent, storage and agent its children,
// and the agent's call to its model endpoint (a local stand-in for a paid API) carries the trace on.
const ROOT = resolve(import.meta.dirname, "../..");
const dir = mkdtempSync(join(tmpdir(), "aiagent-tracing-"));

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  attributes: { key: string; value: { stringValue?: string } }[];
}
const spans: OtlpSpan[] = [];
let receiver: Server;
let llm: LlmStandIn;
let proc: ChildProcess;
let url: string;
let stdout = "";
let demo: { key: string; chatbotId: string };

beforeAll(async () => {
  receiver = createServer((req, res) => {
    let body = "";
    req.on("data", (d: Buffer) => (body += d.toString()));
    req.on("end", () => {
      const j = JSON.parse(body) as { resourceSpans: { scopeSpans: { spans: OtlpSpan[] }[] }[] };
      for (const rs of j.resourceSpans) for (const ss of rs.scopeSpans) spans.push(...ss.spans);
      res.writeHead(200, { "content-type": "application/json" });
      res.end("{}");
    });
  });
  await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", r));
  const otlp = `http://127.0.0.1:${(receiver.address() as { port: number }).port}`;
  llm = await startLlmStandIn();
  const port = await freePort();
  url = `http://127.0.0.1:${port}`;
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    AIAGENT_DB: join(dir, "aiagent.db"),
    AIAGENT_PORT: String(port),
    AIAGENT_LOG_LEVEL: "debug",
    OTEL_EXPORTER_OTLP_ENDPOINT: otlp,
    OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
    OTEL_BSP_SCHEDULE_DELAY: "100",
    AIAGENT_LLM_BASE_URL: llm.url,
    AIAGENT_LLM_API_KEY: "sk-stand-in-secret-0123456789",
    AIAGENT_LLM_MODEL: "stand-in-model",
  };
  delete env.NODE_ENV;
  proc = spawn(join(ROOT, "bin/aiagent"), ["serve"], { env, stdio: ["ignore", "pipe", "pipe"] });
  demo = await new Promise((done, fail) => {
    const timer = setTimeout(() => fail(new Error("the server did not start")), scaled(30_000));
    proc.stdout!.on("data", (d: Buffer) => {
      stdout += d.toString();
      const key = /client_api_key: (\S+)/.exec(stdout)?.[1];
      const chatbotId = /chatbot_id:\s+(\S+)/.exec(stdout)?.[1];
      if (key && chatbotId && stdout.includes('"msg":"listening"')) {
        clearTimeout(timer);
        done({ key, chatbotId });
      }
    });
    proc.on("exit", (code) => fail(new Error(`serve exited with ${code}`)));
  });
});
afterAll(async () => {
  proc?.kill("SIGKILL");
  receiver?.close();
  await llm?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function waitForSpans(pred: () => boolean): Promise<void> {
  const deadline = Date.now() + scaled(15_000);
  while (!pred() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
}

describe("traces over OTLP", () => {
  it("one span per RPC under the caller's traceparent, with its unit of work and agent reply as children", async () => {
    const traceId = randomBytes(16).toString("hex");
    const callerSpan = randomBytes(8).toString("hex");
    const traceparent = `00-${traceId}-${callerSpan}-01`;
    const t = await postJson(
      url,
      "/ai_agent/get_access_token",
      { user_id: "traced-user", chatbot_id: demo.chatbotId, client_api_key: demo.key },
      { traceparent },
    );
    expect(t.status).toBe(200);
    const sent = await postJson(
      url,
      `/ai_agent/send_message?access_token=${encodeURIComponent(t.body.data.access_token)}`,
      { content: "hello, traced" },
      { traceparent },
    );
    expect(sent.status).toBe(200);
    const named = (name: string) => spans.filter((s) => s.traceId === traceId && s.name === name);
    await waitForSpans(() => named("ConversationService/SendMessage").length > 0 && named("agent.reply").length > 0);

    const [token] = named("TokenService/GetAccessToken");
    expect(token?.parentSpanId).toBe(callerSpan);
    const tokenUnits = named("storage.unit_of_work").filter((s) => s.parentSpanId === token!.spanId);
    expect(tokenUnits.length).toBeGreaterThan(0);

    const [message] = named("ConversationService/SendMessage");
    expect(message?.parentSpanId).toBe(callerSpan);
    expect(named("storage.unit_of_work").some((s) => s.parentSpanId === message!.spanId)).toBe(true);
    const reply = named("agent.reply").find((s) => s.parentSpanId === message!.spanId);
    expect(reply).toBeDefined();
    // The model endpoint was called as the agent reply's child, in the caller's trace.
    expect(llm.requests.map((r) => r.traceparent)).toContain(`00-${traceId}-${reply!.spanId}-01`);
    const protocol = token!.attributes.find((a) => a.key === "aiagent.protocol")?.value.stringValue;
    expect(protocol).toBe("json");
    // Span attributes name the method, never who called.
    const everything = JSON.stringify(spans);
    for (const secret of ["traced-user", demo.key, demo.chatbotId]) expect(everything).not.toContain(secret);

    // The request's log lines carry its trace id.
    const lines = stdout
      .split("\n")
      .filter((l) => l.startsWith("{"))
      .map((l) => JSON.parse(l) as { msg: string; url?: string; trace_id?: string });
    const requestLines = lines.filter((l) => l.msg === "request" && l.url?.startsWith("/ai_agent/"));
    expect(requestLines.length).toBeGreaterThanOrEqual(2);
    for (const l of requestLines) expect(l.trace_id).toBe(traceId);
  });
});
