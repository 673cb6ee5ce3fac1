import { describe, expect, it } from "vitest";
import { getJson } from "../helpers/http.js";
import { ACCOUNT_ROUTES, accounts, bolaWorld, conversations, FRAME_ROUTES, frames, matrix, s } from "./bola-fixture.js";

// Cross-customer access on the frame routes (ID tokens: bola-id-tokens.test.ts, in parallel).
bolaWorld();

describe("frame tokens: 8 customers × 8 conversations", () => {
  it.each(Object.keys(FRAME_ROUTES))("%s: only the conversation's own customer and chatbot", async (name) => {
    const { owned, refused } = await matrix(frames, name, FRAME_ROUTES[name]!);
    expect(owned).toBe(8);
    expect(refused).toBe(56);
  });

  it("a page its owner has just read (its owner remembered) is still refused to every other caller", async () => {
    const read = FRAME_ROUTES["GET /get_messages_for_conversation"]!;
    const readAsAccount = ACCOUNT_ROUTES["GET /get_messages_for_conversation"]!;
    for (const c of conversations) {
      const owner = frames.find((p) => p.owns(c))!;
      expect((await read(owner, c.id)).status).toBe(200);
      expect((await read(owner, c.id)).status).toBe(200);
      for (const p of frames) if (p !== owner) expect((await read(p, c.id)).status, p.name).toBe(404);
      for (const p of accounts) expect((await readAsAccount(p, c.id)).status, p.name).toBe(p.owns(c) ? 200 : 404);
    }
  });

  it("GET /ai_agent/conversations lists exactly the caller's own conversation", async () => {
    for (const p of frames) {
      const r = await getJson(s.url, "/ai_agent/conversations", { access_token: p.token });
      expect(r.status).toBe(200);
      expect(r.body.data.conversations.map((c: { conversation_id: string }) => c.conversation_id)).toEqual(
        conversations.filter(p.owns).map((c) => c.id),
      );
    }
  });
});
