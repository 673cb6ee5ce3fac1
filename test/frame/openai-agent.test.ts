import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { parseSse } from "../../src/agents/sse.js";
import { idToken, issueTokens } from "../helpers/flows.js";
import { getJson, requestJson } from "../helpers/http.js";
import { suiteCanRun } from "../helpers/system-packages.js";
import { ToolServer } from "../helpers/tool-server.js";
import { chatFrame, launchBrowser, newContext, typeMessage } from "./browser.js";
import { type Embedding, startEmbedding } from "./fixtures.js";
import { contentChunk, type LlmStandIn, oneCallThen, sendEvent, startLlmStandIn, startSse } from "./llm-stand-in.js";

const withBrowser = suiteCanRun(import.meta.filename, ["chromium"], "its test in the frame");

const LLM_KEY = "sk-stand-in-secret-0123456789";
let browser: Browser | undefined;
let llm: LlmStandIn;
let e: Embedding;

beforeAll(async () => {
  llm = await startLlmStandIn();
  [browser, e] = await Promise.all([
    withBrowser ? launchBrowser() : undefined,
    startEmbedding({
      env: { AIAGENT_LLM_BASE_URL: llm.url, AIAGENT_LLM_API_KEY: LLM_KEY, AIAGENT_LLM_MODEL: "stand-in-model" },
    }),
  ]);
});
afterAll(async () => {
  await browser?.close();
  await e?.close();
  await llm?.close();
});

/** Sends over the documented NDJSON route and returns its lines. */
async function sendStream(token: string, content: string, conversationId?: string): Promise<Record<string, any>[]> {
  const res = await fetch(`${e.service.url}/ai_agent/send_message_stream?access_token=${encodeURIComponent(token)}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ content, ...(conversationId ? { conversation_id: conversationId } : {}) }),
  });
  expect(res.status).toBe(200);
  return (await res.text())
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, any>);
}

describe("server-sent events parsing", () => {
  test("events split anywhere across chunks, CRLF or CR line ends, comments and multi-line data come out whole", async () => {
    const text =
      ': keep-alive\r\ndata: {"a":1}\r\n\r\ndata: line one\ndata: line two\n\nevent: ignored\ndata: [DONE]\r\r';
    const bytes = new TextEncoder().encode(text);
    for (const size of [1, 2, 3, 7, bytes.length]) {
      async function* chunks() {
        for (let i = 0; i < bytes.length; i += size) yield bytes.slice(i, i + size);
      }
      const out: string[] = [];
      for await (const ev of parseSse(chunks())) out.push(ev.data);
      expect(out).toEqual(['{"a":1}', "line one\nline two", "[DONE]"]);
    }
  });
});

describe("the OpenAI-compatible agent", () => {
  test("streams the upstream reply piece by piece, cites the sources it used", async () => {
    llm.behave((_req, res) => {
      startSse(res);
      for (const p of ["Orders ship ", "within 2 business days ", "[1]."]) sendEvent(res, contentChunk(p));
      sendEvent(res, { choices: [{ index: 0, delta: {}, finish_reason: "stop" }] });
      sendEvent(res, "[DONE]");
      res.end();
    });
    const t = await issueTokens(e.service.url, e.account, "llm-user-1");
    const lines = await sendStream(t.access_token, "How long does shipping take?");
    expect(lines.map((l) => l.result?.delta).filter(Boolean)).toEqual([
      "Orders ship ",
      "within 2 business days ",
      "[1].",
    ]);
    const reply = lines.at(-1)!.result.reply;
    expect(reply.content).toBe("Orders ship within 2 business days [1].");
    // The documented title, url and snippet (the provenance fields beside them stay empty for a model's
    // citations from the knowledge list: only the built-in agent fills them yet).
    expect(reply.documents).toEqual([
      expect.objectContaining({
        title: "Shipping",
        url: "https://shop.example/help/shipping",
        snippet: expect.stringContaining("Orders ship"),
      }),
    ]);
    // No tool was called (tool calls run end to end: test/agent/tools.test.ts).
    expect(reply.tool_calls).toBe("");

    const sent = llm.requests.at(-1)!;
    expect(sent.authorization).toBe(`Bearer ${LLM_KEY}`);
    expect(sent.body.model).toBe("stand-in-model");
    expect(sent.body.stream).toBe(true);
    expect(sent.body.messages[0]!.role).toBe("system");
    expect(sent.body.messages[0]!.content).toContain("[1] Shipping: Orders ship within 2 business days");
    expect(sent.body.messages.at(-1)).toEqual({ role: "user", content: "How long does shipping take?" });
    expect(e.service.logs.join("\n")).not.toContain(LLM_KEY);
  });

  test("an upstream failure, before or during the stream, ends in a readable unavailable error and keeps the user's message", async () => {
    const t = await issueTokens(e.service.url, e.account, "llm-user-2");
    llm.behave((_req, res) => {
      res.writeHead(500, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: "the model is overloaded", type: "server_error" } }));
    });
    const first = await sendStream(t.access_token, "Are you there?");
    const conversationId = first[0]!.result.user_message.conversation_id as string;
    expect(first.at(-1)!.error).toMatchObject({
      code: "unavailable",
      message: expect.stringContaining("your message was saved"),
    });

    // Cut off mid-reply: no finish, no [DONE].
    llm.behave((_req, res) => {
      startSse(res);
      sendEvent(res, contentChunk("Half a rep"));
      res.end();
    });
    const second = await sendStream(t.access_token, "Still there?", conversationId);
    expect(second.map((l) => l.result?.delta).filter(Boolean)).toEqual(["Half a rep"]);
    expect(second.at(-1)!.error.code).toBe("unavailable");

    const history = await getJson(e.service.url, "/get_messages_for_conversation", {
      conversation_id: conversationId,
      access_token: t.access_token,
    });
    expect(history.body.messages.map((m: { role: string; content: string }) => [m.role, m.content])).toEqual([
      ["user", "Are you there?"],
      ["user", "Still there?"],
    ]);
    expect(e.service.logs.join("\n")).not.toContain(LLM_KEY);
  });

  test.runIf(withBrowser)(
    "in the frame the reply appears while the upstream is still writing it; a failure shows a readable error and the message stays",
    async () => {
      let release!: () => void;
      const released = new Promise<void>((r) => (release = r));
      llm.behave(async (_req, res) => {
        startSse(res);
        sendEvent(res, contentChunk("Orders ship "));
        sendEvent(res, contentChunk("within 2 "));
        // Holds the rest back until the test has seen the first pieces on screen.
        await released;
        sendEvent(res, contentChunk("business days [1].", "stop"));
        sendEvent(res, "[DONE]");
        res.end();
      });
      const context = await newContext(browser!);
      const page = await context.newPage();
      await page.goto(`${e.host.url}/`);
      let frame = await chatFrame(page);
      await typeMessage(frame, "How long does shipping take?");
      const partial = frame.locator(".msg--assistant .msg__bubble", { hasText: "Orders ship within 2" });
      await partial.waitFor();
      expect(await partial.textContent()).toBe("Orders ship within 2 ");
      expect(await frame.locator("#log").getAttribute("aria-busy")).toBe("true");
      release();
      const done = frame.locator(".msg--assistant", { hasText: "Orders ship within 2 business days [1]." });
      await done.getByRole("link", { name: "Shipping" }).waitFor();
      expect(await frame.locator("#log").getAttribute("aria-busy")).toBe("false");

      llm.behave((_req, res) => {
        res.writeHead(503, { "content-type": "application/json" });
        res.end(JSON.stringify({ error: { message: "upstream down" } }));
      });
      await typeMessage(frame, "And returns?");
      const error = frame.locator(".msg--error");
      await error.waitFor();
      expect(await error.textContent()).toContain(
        "The AI agent could not answer; your message was saved, please try again.",
      );
      expect(await error.getAttribute("role")).toBe("alert");

      await page.reload();
      frame = await chatFrame(page);
      expect(await frame.locator(".msg--user .msg__bubble").allTextContents()).toEqual([
        "How long does shipping take?",
        "And returns?",
      ]);
      await context.close();
    },
  );

  test.runIf(withBrowser)(
    "while a tool call runs the frame shows a short line in its language, never the call; the reply clears it",
    async () => {
      const tools = new ToolServer();
      await tools.start();
      let release!: () => void;
      const released = new Promise<void>((r) => (release = r));
      tools.behave = (_c, res) =>
        void released.then(() => res.writeHead(200).end('{"status":"in transit, secret-tracking-XYZ"}'));
      try {
        const auth = { authorization: `Bearer ${await idToken(e.service.url, e.account)}` };
        const made = await requestJson(
          e.service.url,
          "POST",
          `/v1/account/chatbots/${e.account.chatbotId}/tools`,
          auth,
          {
            name: "track_parcel",
            description: "Where a parcel is.",
            url: tools.url("/track"),
          },
        );
        expect(made.status).toBe(200);
        tools.secret = made.body.data.secret;
        llm.behave(
          oneCallThen(
            { id: "t1", name: "track_parcel", arguments: '{"parcel":"PARCEL-7788"}' },
            "Your parcel is in transit.",
          ),
        );
        const context = await newContext(browser!);
        const page = await context.newPage();
        await page.goto(`${e.host.url}/`);
        const frame = await chatFrame(page);
        await typeMessage(frame, "Where is my parcel?");
        const line = frame.locator(".msg__activity");
        await line.waitFor();
        expect(await line.textContent()).toBe("Looking that up…");
        expect(await frame.locator("#log").textContent()).not.toContain("PARCEL-7788");
        release();
        await frame.locator(".msg--assistant", { hasText: "Your parcel is in transit." }).waitFor();
        expect(await frame.locator(".msg__activity").count()).toBe(0);
        expect(await frame.locator("#log").textContent()).not.toContain("secret-tracking-XYZ");
        await context.close();
      } finally {
        release();
        await tools.close();
      }
    },
  );
});
