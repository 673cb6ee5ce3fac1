import { describe, expect, it } from "vitest";
import type { ToolRecord } from "../../../src/domain/agent/tools.js";
import { newId } from "../../../src/domain/ids.js";
import { account, message } from "./fixtures.js";
import type { Harness } from "./harness.js";

const tool = (a: { accountId: string; chatbotId: string }, name: string): ToolRecord => ({
  toolId: newId(),
  accountId: a.accountId,
  chatbotId: a.chatbotId,
  name,
  description: `The ${name} tool.`,
  parameters: '{"type":"object"}',
  url: "https://tools.example/x",
  method: "POST",
  timeoutMs: 10_000,
  requiresApproval: true,
  secretSealed: "sealed",
  createdAt: 5,
});

/** Agent tools, settings, daily usage and handovers, the same on every back end. */
export function agentCases(h: () => Harness) {
  describe("agent tools and settings", () => {
    it("keeps a chatbot's tools by name, one per name, each account's own", async () => {
      const { store } = h();
      const a = await account(store);
      const b = await account(store);
      const t2 = tool(a, "zeta");
      const t1 = tool(a, "alpha");
      expect(await store.agents.insertTool(t2)).toBe(true);
      expect(await store.agents.insertTool(t1)).toBe(true);
      expect(await store.agents.insertTool({ ...tool(a, "alpha") })).toBe(false);
      expect((await store.agents.tools(a.chatbotId)).map((t) => t.name)).toEqual(["alpha", "zeta"]);
      expect(await store.agents.tool(a.accountId, a.chatbotId, t1.toolId)).toEqual(t1);
      expect(await store.agents.tool(b.accountId, a.chatbotId, t1.toolId)).toBeUndefined();
      // A name another tool holds: nothing changes.
      expect(await store.agents.updateTool({ ...t2, name: "alpha" })).toBe(false);
      expect(await store.agents.updateTool({ ...t2, description: "new", requiresApproval: false })).toBe(true);
      expect(await store.agents.tool(a.accountId, a.chatbotId, t2.toolId)).toMatchObject({
        description: "new",
        requiresApproval: false,
      });
      expect(await store.agents.deleteTool(b.accountId, a.chatbotId, t2.toolId)).toBe(false);
      expect(await store.agents.deleteTool(a.accountId, a.chatbotId, t2.toolId)).toBe(true);
      expect((await store.agents.tools(a.chatbotId)).map((t) => t.name)).toEqual(["alpha"]);
    });

    it("stores settings, adds up a day's tokens, and keeps a handover until it is cleared", async () => {
      const { store } = h();
      const a = await account(store);
      expect(await store.agents.settings(a.chatbotId)).toBeUndefined();
      const s = {
        chatbotId: a.chatbotId,
        accountId: a.accountId,
        instructions: "Be brief.",
        handoverPhrases: ["cancel"],
        dontKnowLimit: 2,
        dailyTokenBudget: 5000,
        updatedAt: 7,
      };
      await store.agents.putSettings(s);
      await store.agents.putSettings({ ...s, instructions: "Be kind." });
      expect(await store.agents.settings(a.chatbotId)).toEqual({ ...s, instructions: "Be kind." });
      await Promise.all([
        store.agents.addTokens(a.chatbotId, "2026-11-27", 100),
        store.agents.addTokens(a.chatbotId, "2026-11-27", 50),
        store.agents.addTokens(a.chatbotId, "2026-11-28", 1),
      ]);
      expect(await store.agents.tokensUsed(a.chatbotId, "2026-11-27")).toBe(150);
      expect(await store.agents.tokensUsed(a.chatbotId, "2026-11-26")).toBe(0);

      const conversationId = newId();
      await message(store, a, conversationId, { at: 10, start: true });
      await store.agents.setHandover({ conversationId, reason: "asked for a person", at: 11 });
      expect(await store.agents.handover(conversationId)).toEqual({
        conversationId,
        reason: "asked for a person",
        at: 11,
      });
      await store.agents.clearHandover(conversationId);
      expect(await store.agents.handover(conversationId)).toBeUndefined();
    });

    it("keeps a waiting tool call until one decision, each conversation its own", async () => {
      const { store } = h();
      const a = await account(store);
      const conversationId = newId();
      const m = await message(store, a, conversationId, { at: 10, start: true });
      const waiting = {
        accountId: a.accountId,
        chatbotId: a.chatbotId,
        conversationId,
        callId: "call_1",
        messageId: m.messageId,
        messageOrder: m.messageOrder,
        toolName: "refund_order",
        arguments: '{"order_id":"5"}',
        status: "pending" as const,
        decidedBy: "",
        decidedAt: null,
        createdAt: 11,
      };
      await store.approvals.add(waiting);
      // Recorded again (a retried unit of work): the first stays.
      await store.approvals.add({ ...waiting, toolName: "other" });
      expect(await store.approvals.get(conversationId, "call_1")).toEqual(waiting);
      await store.approvals.add({ ...waiting, callId: "call_2", createdAt: 12 });
      const [first, second] = await Promise.all([
        store.approvals.decide(conversationId, "call_1", "approved", "ann@example.com", 20),
        store.approvals.decide(conversationId, "call_1", "refused", "bob@example.com", 21),
      ]);
      expect([first, second].filter(Boolean)).toHaveLength(1);
      expect((await store.approvals.forConversation(conversationId, 10)).map((x) => [x.callId, x.status])).toEqual([
        ["call_1", first ? "approved" : "refused"],
        ["call_2", "pending"],
      ]);
      expect(await store.approvals.get(conversationId, "call_1")).toMatchObject({
        decidedBy: first ? "ann@example.com" : "bob@example.com",
        decidedAt: first ? 20 : 21,
      });
      expect(await store.approvals.get(newId(), "call_1")).toBeUndefined();
    });

    it("keeps one draft per chatbot, and lists a chatbot's latest conversations that have messages", async () => {
      const { store } = h();
      const a = await account(store);
      const knowledge = [{ title: "Returns", url: "https://shop.example/r", snippet: "Free for 60 days." }];
      const { chatbotId, accountId } = a;
      const draft = { chatbotId, accountId, instructions: "Be brief.", knowledge, model: "", updatedAt: 3 };
      expect(await store.drafts.draft(a.chatbotId)).toBeUndefined();
      await store.drafts.putDraft(draft);
      await store.drafts.putDraft({ ...draft, instructions: "Be kind.", updatedAt: 4 });
      expect(await store.drafts.draft(a.chatbotId)).toEqual({ ...draft, instructions: "Be kind.", updatedAt: 4 });
      const ids: string[] = [];
      for (const at of [100, 300, 200]) {
        const id = newId();
        await message(store, a, id, { at, start: true });
        ids.push(id);
      }
      expect(await store.drafts.latestConversations(a.chatbotId, 2)).toEqual([ids[1], ids[2]]);
      expect(await store.drafts.deleteDraft(a.chatbotId)).toBe(true);
      expect(await store.drafts.deleteDraft(a.chatbotId)).toBe(false);
      expect(await store.drafts.draft(a.chatbotId)).toBeUndefined();
    });
  });
}
