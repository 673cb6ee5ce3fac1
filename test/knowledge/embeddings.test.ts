import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openAiEmbedder } from "../../src/knowledge/embeddings.js";
import { type EmbeddingsServer, startEmbeddingsServer } from "../helpers/embeddings-server.js";
import { idToken, issueTokens, send } from "../helpers/flows.js";
import { startServer, type TestAccount, type TestServer } from "../helpers/server.js";
import { addSource, b64, settled } from "./support.js";

// Knowledge with an OpenAI-compatible embeddings endpoint (a loopback stand-in with deterministic vectors): passages
// are embedded when indexed, and a question is answered from BM25 and the nearest passages merged by reciprocal rank
// fusion, so that a question in German finds an English passage. Without the endpoint, or with it down, BM25 alone
// answers as before. SQLite here, PostgreSQL in api-postgres.

const REFUNDS = "# Refunds\n\nRefunds are paid back to your card within 14 days of the return.\n";
const DELIVERY = "# Delivery\n\nEvery parcel leaves our warehouse the morning after the order.\n";
const GERMAN = "Wann bekomme ich mein Geld zurück? Rückerstattung bitte";

let embeddings: EmbeddingsServer;
let withVectors: TestServer;
let without: TestServer;

beforeAll(async () => {
  embeddings = await startEmbeddingsServer();
  [withVectors, without] = await Promise.all([
    startServer({
      env: {
        AIAGENT_EMBEDDINGS_BASE_URL: embeddings.url,
        AIAGENT_EMBEDDINGS_API_KEY: "sk-embeddings-test-key",
        AIAGENT_EMBEDDINGS_MODEL: "concepts-1",
      },
    }),
    startServer(),
  ]);
});
afterAll(async () => {
  await Promise.all([withVectors?.close(), without?.close()]);
  await embeddings?.close();
});

/** An account on the server with the two documents indexed. */
async function teach(s: TestServer): Promise<TestAccount> {
  const a = await s.account();
  const token = await idToken(s.url, a);
  for (const [file_name, text] of [
    ["refunds.md", REFUNDS],
    ["delivery.md", DELIVERY],
  ] as const) {
    const r = await addSource(s.url, token, a.chatbotId, { kind: "file", file_name, content: b64(text) });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(await settled(s.url, token, a.chatbotId, r.body.data.source_id)).toMatchObject({ status: "indexed" });
  }
  return a;
}

async function ask(s: TestServer, a: TestAccount, question: string) {
  const t = await issueTokens(s.url, a, `customer-${Math.random().toString(36).slice(2)}`);
  return (await send(s.url, t.access_token, question)).reply as {
    content: string;
    documents?: { source_title?: string; score?: number }[];
  };
}

describe("knowledge with an embeddings endpoint", () => {
  it("embeds passages with the configured model and key, and answers a question in another language", {
    timeout: 120_000,
  }, async () => {
    const a = await teach(withVectors);
    // Both files' passages were sent with the key as a bearer token, to the configured model.
    expect(embeddings.requests.length).toBeGreaterThanOrEqual(2);
    expect(embeddings.requests.every((r) => r.authorization === "Bearer sk-embeddings-test-key")).toBe(true);
    expect(embeddings.requests.every((r) => r.model === "concepts-1")).toBe(true);
    const reply = await ask(withVectors, a, GERMAN);
    expect(reply.documents?.[0], reply.content).toMatchObject({ source_title: "Refunds" });
    expect(reply.content).toContain("14 days");
    // An English question is still found by its words.
    expect((await ask(withVectors, a, "How fast does my parcel leave the warehouse?")).content).toContain("morning");
    // The key never reaches the log.
    expect(withVectors.logs.join("\n")).not.toContain("sk-embeddings-test-key");
  });

  it("answers by BM25 alone when the endpoint is down, and without one the cross-language question is not known", {
    timeout: 120_000,
  }, async () => {
    const a = await teach(withVectors);
    embeddings.failWith = 503;
    try {
      const reply = await ask(withVectors, a, "When are refunds paid back to my card?");
      expect(reply.documents?.[0], reply.content).toMatchObject({ source_title: "Refunds" });
    } finally {
      embeddings.failWith = undefined;
    }
    const b = await teach(without);
    const plain = await ask(without, b, "When are refunds paid back to my card?");
    expect(plain.documents?.[0], plain.content).toMatchObject({ source_title: "Refunds" });
    // BM25 cannot match German words to an English passage: the agent says it does not know rather than guess.
    const german = await ask(without, b, GERMAN);
    expect(german.documents ?? []).toEqual([]);
  });

  it("refuses an endpoint's answer that is not one list of numbers per text, and a private address in production", async () => {
    const client = (development: boolean) =>
      openAiEmbedder({ baseUrl: embeddings.url, apiKey: "k", model: "m" }, { development });
    const signal = new AbortController().signal;
    const bad: [unknown, RegExp][] = [
      [{ data: [{ embedding: [1, 0] }] }, /1 vectors for 2 texts/],
      [{ data: [{ embedding: [1, "x"] }, { embedding: [1, 0] }] }, /not a list of numbers/],
      [{ data: [{ embedding: [1, 0] }, { embedding: [1, 0, 0] }] }, /different lengths/],
      [{ nothing: true }, /no vectors for 2 texts/],
    ];
    try {
      for (const [answer, reason] of bad) {
        embeddings.answer = () => answer;
        await expect(client(true).embed(["a", "b"], signal)).rejects.toThrow(reason);
      }
    } finally {
      embeddings.answer = undefined;
    }
    expect(await client(true).embed(["refund", "parcel"], signal)).toHaveLength(2);
    // In production the loopback endpoint is not a public address: refused before any request.
    const before = embeddings.requests.length;
    await expect(client(false).embed(["a"], signal)).rejects.toThrow(/not a public address/);
    expect(embeddings.requests.length).toBe(before);
  });
});
