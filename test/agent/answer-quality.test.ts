import { describe, expect, it } from "vitest";
import { DEMO_KNOWLEDGE } from "../../src/bootstrap.js";
import type { ChatbotRecord } from "../../src/domain/account/repository.js";
import { rankSnippets } from "../../src/domain/agent/matching.js";
import { offlineAnswer } from "../../src/domain/agent/offline-agent.js";
import { score } from "./answer-quality.js";

// The built-in agent's answers on the committed question set (test/agent/questions.json). Before MiniSearch the
// hand-written matching answered 31 of the 40 tuning questions and 11 of the 15 held-out ones (docs/inbox.md).

describe("the built-in agent's answer quality", () => {
  it("answers every tuning question from the expected snippet (or says it has none)", () => {
    const s = score(rankSnippets, (q) => !q.heldOut);
    expect(s.wrong).toEqual([]);
    expect(s.total).toBe(40);
  });

  it("answers at least 14 of the 15 held-out questions as expected", () => {
    const s = score(rankSnippets, (q) => q.heldOut === true);
    expect(s.total).toBe(15);
    expect(s.right, s.wrong.join("\n")).toBeGreaterThanOrEqual(14);
  });

  it('answers "My parcel arrived damaged" from the demo\'s returns snippet, not the tracking link', () => {
    const chatbot = { name: "Demo assistant", knowledge: DEMO_KNOWLEDGE } as ChatbotRecord;
    const a = offlineAnswer(chatbot, "My parcel arrived damaged");
    expect(a.documents.map((d) => d.title)).toEqual(["Returns"]);
    expect(a.content).not.toContain("tracking link");
  });
});
