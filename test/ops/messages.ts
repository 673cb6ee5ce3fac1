import { issueTokens, send } from "../helpers/flows.js";
import { getJson } from "../helpers/http.js";
import type { TestAccount } from "../helpers/server.js";

/** Every message content of one conversation, read page by page through the JSON route as the frame reads it. */
export async function allContents(url: string, a: TestAccount, userId: string, conversationId: string) {
  const { access_token } = await issueTokens(url, a, userId);
  const contents: string[] = [];
  for (let offset = 0; ; offset += 100) {
    const r = await getJson(url, "/get_messages_for_conversation", {
      conversation_id: conversationId,
      limit: 100,
      offset,
      access_token,
    });
    if (r.status !== 200) throw new Error(`get_messages_for_conversation: ${r.status} ${JSON.stringify(r.body)}`);
    const page = (r.body.messages ?? r.body.data?.messages) as { content: string }[];
    contents.push(...page.map((m) => m.content));
    if (!(r.body.has_more ?? r.body.data?.has_more)) return contents;
  }
}

/** Messages written one after another into one conversation until stopped (at most 5000, or a minute). */
export interface WriteLoad {
  conversationId: string;
  /** The contents acknowledged so far, in order ("m-0", "m-1", …). */
  acked: string[];
  /** Stops writing and waits for the message in flight. */
  stop(): Promise<void>;
}

/** Starts a write load as `userId`; resolves once 20 messages are acknowledged. */
export async function startWriteLoad(url: string, a: TestAccount, userId: string): Promise<WriteLoad> {
  const { access_token } = await issueTokens(url, a, userId);
  const conversationId = (await send(url, access_token, "m-0")).conversation_id;
  const acked = ["m-0"];
  let stopped = false;
  // Bounded in count and time; sequential, so "acknowledged" has one order.
  const deadline = Date.now() + 60_000;
  const writer = (async () => {
    for (let i = 1; i < 5000 && !stopped && Date.now() < deadline; i++) {
      await send(url, access_token, `m-${i}`, conversationId);
      acked.push(`m-${i}`);
    }
  })();
  while (acked.length < 20) await new Promise((r) => setTimeout(r, 10));
  return {
    conversationId,
    acked,
    stop: () => {
      stopped = true;
      return writer;
    },
  };
}
