import { describe, expect, it } from "vitest";
import { manualPages, readPage } from "../helpers/docs.js";
import { freePort } from "../helpers/ports.js";
import { scaled } from "../helpers/time-scale.js";
import { jsonValues, manualRun, runScript, shBlocks } from "./manual-run.js";

// The manual's own commands, run as written (see manual-run.ts): the walkthrough top to bottom (`npm start`), and the
// pages that continue it. Every `npm start` of the checkout is in this file, one after the other, so no two builds of
// dist/ race; the lines of ./bin/aiagent are in readme-command-lines.test.ts, which runs beside this one.
const { environment, startService } = manualRun();

describe("the manual's commands, as written", () => {
  it("names the command as ./bin/aiagent in every example", () => {
    for (const page of manualPages())
      for (const block of readPage(page).matchAll(/```sh\n([\s\S]*?)```/g))
        for (const line of block[1]!.split("\n"))
          expect(line, `an example in ${page} runs aiagent without ./bin/`).not.toMatch(/(^|[\s($])(npx )?aiagent /);
  });

  it(
    "the walkthrough works top to bottom on a fresh start",
    async () => {
      const [start, script, ...more] = shBlocks("Walkthrough");
      expect(start!.trim()).toBe("npm start");
      expect(more).toEqual([]);
      const env = environment("walkthrough", await freePort());
      const service = await startService(start!, env);
      const r = await runScript(script!, env);
      expect(r.code, `${r.stdout}\n${r.stderr}\n${service.output()}`).toBe(0);
      // No step answered an error, and each step's answer is there.
      expect(r.stdout).not.toMatch(/"code":\s*"/);
      expect(r.stdout).toContain("account you@example.com created");
      expect(r.stdout).toContain("it shows where your parcel is"); // the agent's answer, from examples/knowledge.json
      // curl prints no newline after a body: the last two bodies are the last two JSON values of the output.
      const [contacts, messages] = jsonValues(r.stdout).slice(-2);
      expect(contacts.data.data.contacts).toEqual([
        expect.objectContaining({ user_id: "customer-42", contact_name: "Ada Lovelace", unread_message_count: "1" }),
      ]);
      expect(messages.messages.map((m: { role: string; content: string }) => [m.role, m.content])).toEqual([
        ["user", "Where is my parcel?"],
        ["assistant", expect.stringContaining("tracking link")],
      ]);
    },
    scaled(240_000),
  );

  it(
    'the "Webhooks" commands work after the walkthrough, with its variables',
    async () => {
      const [start, script] = shBlocks("Walkthrough");
      const [hooks, ...more] = shBlocks("Webhooks", "docs/webhooks.md");
      expect(more).toEqual([]);
      const env = environment("webhooks", await freePort());
      const service = await startService(start!, env);
      const r = await runScript(`${script}\n${hooks}`, env);
      expect(r.code, `${r.stdout}\n${r.stderr}\n${service.output()}`).toBe(0);
      expect(r.stdout).not.toMatch(/"code":\s*"/);
      // The endpoints, the closed conversation, the log, the deliveries and the disabled endpoint, in that order.
      const [endpoints, closed, log, deliveries, disabled] = jsonValues(r.stdout).slice(-5);
      expect(endpoints.data.endpoints).toHaveLength(1);
      expect(endpoints.data.endpoints[0]).not.toHaveProperty("secret");
      expect(closed.data.status).toBe("closed");
      expect(log.data.events.map((e: { type: string }) => e.type)).toEqual([
        "message.created",
        "message.created",
        "conversation.closed",
      ]);
      expect(deliveries.data.deliveries.map((d: { event_type: string }) => d.event_type)).toEqual([
        "conversation.closed",
      ]);
      expect(disabled.data.status).toBe("disabled");
    },
    scaled(240_000),
  );

  it(
    '"Teach the agent" continues the walkthrough: a PDF indexed and cited, the search, a source on a schedule',
    async () => {
      const [start, script] = shBlocks("Walkthrough");
      const page = "docs/knowledge.md";
      const [pdf] = shBlocks("From a PDF to a cited answer in five minutes", page);
      const [search] = shBlocks("Try a question: what the agent finds", page);
      const [schedule] = shBlocks("Re-sync on a schedule", page);
      const env = environment("knowledge", await freePort());
      const service = await startService(start!, env);
      const r = await runScript([script, pdf, search, schedule].join("\n"), env);
      expect(r.code, `${r.stdout}\n${r.stderr}\n${service.output()}`).toBe(0);
      expect(r.stdout).not.toMatch(/"code":\s*"/);
      const values = jsonValues(r.stdout);
      const found = values.find((v) => v.data?.passages)!.data;
      expect(found.answers).toBe(true);
      expect(found.passages[0]).toMatchObject({ source_title: "Returns policy", knowledge_version: 1 });
      expect(found.passages[0].excerpt).toContain("5 business days");
      expect(r.stdout.trimEnd().split("\n").at(-1)).toMatch(/24$/);
    },
    scaled(240_000),
  );

  it(
    "the handover walkthrough continues the walkthrough: take over, reply, hand back, the agent answers again",
    async () => {
      const [start, script] = shBlocks("Walkthrough");
      const [handover, ...more] = shBlocks(
        "Walkthrough: from a contact to a human reply and back",
        "docs/conversations.md",
      );
      expect(more).toEqual([]);
      const env = environment("handover", await freePort());
      const service = await startService(start!, env);
      const r = await runScript(`${script}\n${handover}`, env);
      expect(r.code, `${r.stdout}\n${r.stderr}\n${service.output()}`).toBe(0);
      expect(r.stdout).not.toMatch(/"code":\s*"/);
      // Each step prints one field: the reply, the conversation found, the take-over, the reply's order, the release,
      // the role of the answer to the next message.
      const lines = r.stdout.trimEnd().split("\n").slice(-5);
      expect(lines).toEqual([
        expect.stringMatching(/^[0-9a-f-]{36}$/),
        "you@example.com",
        "5",
        "ai_agent",
        "assistant",
      ]);
    },
    scaled(240_000),
  );
});
