import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { freePort } from "../frame/browser.js";
import { type LlmStandIn, oneCallThen, startLlmStandIn } from "../frame/llm-stand-in.js";
import { blocks, ROOT } from "../helpers/docs.js";
import { idToken, issueTokens, send, teamToolCalls } from "../helpers/flows.js";
import { startServer, type TestServer } from "../helpers/server.js";
import { scaled } from "../helpers/time-scale.js";

// docs/tools.md's tool server, copied as written (in 15 lines), declared with the page's own curl commands (run in
// bash, with only the port changed to a free one) and called by the agent through a scripted model on loopback.

const PAGE = "docs/tools.md";
const dir = join(ROOT, "tmp", `tools-doc-${process.pid}`);
let proc: ChildProcess | undefined;
let s: TestServer | undefined;
let llm: LlmStandIn | undefined;

afterAll(async () => {
  if (proc?.pid) {
    try {
      process.kill(-proc.pid, "SIGKILL");
    } catch {
      // gone already
    }
  }
  await s?.close(true);
  await llm?.close();
  rmSync(dir, { recursive: true, force: true });
});

it(
  "the page's tool server works when copied: declared with its commands, it verifies and answers the agent's call",
  async () => {
    const [server, ...moreJs] = blocks(PAGE, "A tool server in 15 lines", "js");
    const [commands, ...moreSh] = blocks(PAGE, "A tool server in 15 lines");
    expect(moreJs).toEqual([]);
    expect(moreSh).toEqual([]);
    expect(server!.trimEnd().split("\n").length).toBeLessThanOrEqual(15);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "tool-server.mjs"), server!);

    llm = await startLlmStandIn();
    s = await startServer({ env: { AIAGENT_LLM_BASE_URL: llm.url, AIAGENT_LLM_MODEL: "m" } });
    const a = await s.account();
    const port = await freePort();
    const prelude = [
      `BASE=${s.url}`,
      `get() { node -p "JSON.parse(fs.readFileSync(0, 'utf8')).$1 ?? process.exit(1)"; }`,
      `BOT=${a.chatbotId}`,
      `ID_TOKEN=${await idToken(s.url, a)}`,
    ].join("\n");
    const script = `set -euo pipefail\n${prelude}\n${commands!.replaceAll("127.0.0.1:3000", `127.0.0.1:${port}`)}`;
    let output = "";
    proc = spawn("bash", ["-c", script], {
      cwd: dir,
      env: { ...process.env, PORT: String(port) },
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
    });
    proc.stdout!.on("data", (d: Buffer) => (output += d.toString()));
    proc.stderr!.on("data", (d: Buffer) => (output += d.toString()));
    const code = await new Promise<number | null>((done) => proc!.on("exit", done));
    expect(code, output).toBe(0);
    expect(output).toContain('"name":"track_order"');

    // The server is up once an unsigned request is refused.
    for (let i = 0; ; i++) {
      const r = await fetch(`http://127.0.0.1:${port}/track`, { method: "POST", body: "{}" }).catch(() => undefined);
      if (r) {
        expect(r.status).toBe(401);
        break;
      }
      if (i > 300) throw new Error(`the tool server did not start: ${output}`);
      await new Promise((r) => setTimeout(r, 100));
    }

    llm.behave(
      oneCallThen({ id: "call_doc", name: "track_order", arguments: '{"order_id":"4471"}' }, "It shipped yesterday."),
    );
    const t = await issueTokens(s.url, a, "customer-42");
    const r = await send(s.url, t.access_token, "Where is my order 4471?");
    expect(r.reply.content).toBe("It shipped yesterday.");
    const [record] = await teamToolCalls(s.url, { authorization: `Bearer ${await idToken(s.url, a)}` }, r.reply);
    expect(record).toMatchObject({ name: "track_order", status: "succeeded" });
    expect(JSON.parse(record.result)).toEqual({
      order_id: "4471",
      customer: "customer-42",
      status: "shipped yesterday",
    });
  },
  scaled(120_000),
);

it(
  "the page's draft and replay commands work when copied",
  async () => {
    const [commands, ...more] = blocks(PAGE, "Try a change before it goes live: drafts and replays");
    expect(more).toEqual([]);
    const server = await startServer();
    try {
      const a = await server.account({
        knowledge: [{ title: "Shipping", url: "https://shop.example/shipping", snippet: "Orders ship in 2 days." }],
      });
      await send(server.url, (await issueTokens(server.url, a, "doc-customer")).access_token, "When do orders ship?");
      const prelude = [`BASE=${server.url}`, `BOT=${a.chatbotId}`, `ID_TOKEN=${await idToken(server.url, a)}`].join(
        "\n",
      );
      const out = await new Promise<{ code: number | null; text: string }>((done) => {
        const p = spawn("bash", ["-c", `set -euo pipefail\n${prelude}\n${commands}`], {
          stdio: ["ignore", "pipe", "pipe"],
        });
        let text = "";
        p.stdout.on("data", (d: Buffer) => (text += d.toString()));
        p.stderr.on("data", (d: Buffer) => (text += d.toString()));
        p.on("exit", (code) => done({ code, text }));
      });
      expect(out.code, out.text).toBe(0);
      // Each curl prints one JSON answer, with no newline after it.
      const [draft, replay, added] = out.text
        .replace(/}{"data"/g, '}\n{"data"')
        .split("\n")
        .filter(Boolean);
      // The source added to the draft only: answered queued, for the chatbot, and listed in the draft.
      expect(JSON.parse(added!).data).toMatchObject({ kind: "snippets", chatbot_id: a.chatbotId });
      expect(JSON.parse(draft!).data.instructions).toBe("Answer in one sentence.");
      const result = JSON.parse(replay!).data;
      expect(result.items).toHaveLength(1);
      expect(result.items[0].question).toBe("When do orders ship?");
    } finally {
      await server.close(true);
    }
  },
  scaled(120_000),
);
