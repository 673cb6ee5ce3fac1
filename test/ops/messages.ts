import { issueTokens } from "../helpers/flows.js";
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
