import { describe, expect, it } from "vitest";
import { isDontKnow } from "../../src/domain/agent/handover-rules.js";
import { composeAnswer } from "../../src/domain/agent/offline-agent.js";
import { detectLocale } from "../../src/domain/knowledge/language.js";

// The handover rule "N answers in a row that were I don't know" must recognise the built-in agent's own
// "I don't know" in every language it writes, or a German customer is never handed over.
const chatbot = {
  name: "My shop",
  knowledge: [{ title: "Shipping", url: "https://shop.example/shipping", snippet: "Orders ship within 2 days." }],
  appearance: { agentName: "Ava" },
} as unknown as Parameters<typeof composeAnswer>[0];

describe("the built-in agent's I don't know", () => {
  it.each([
    ["en", "What is the capital of Peru and why is it there?"],
    ["de", "Was ist die Hauptstadt von Peru und warum liegt sie dort?"],
    ["fr", "Quelle est la capitale du Pérou et pourquoi est-elle là ?"],
    ["es", "¿Cuál es la capital de Perú y por qué está allí?"],
  ])("in %s is recognised by the handover rule", (lang, question) => {
    expect(detectLocale(question)).toBe(lang);
    const { content, documents } = composeAnswer(chatbot, question, [], true);
    expect(documents).toEqual([]);
    expect(isDontKnow(content)).toBe(true);
  });

  it("a real answer is not taken for I don't know", () => {
    expect(isDontKnow("Orders ship within 2 days.")).toBe(false);
  });
});
