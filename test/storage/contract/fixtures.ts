import { DEFAULT_APPEARANCE } from "../../../src/domain/account/appearance.js";
import type { ApiKeyRecord } from "../../../src/domain/account/repository.js";
import type { ContactQuery, MessageRecord, MessageRole } from "../../../src/domain/conversation/repository.js";
import { messageEffect, NEW_CONVERSATION } from "../../../src/domain/conversation/rules.js";
import { newId } from "../../../src/domain/ids.js";
import type { NewEvent } from "../../../src/domain/log/repository.js";
import type { Store } from "../../../src/domain/store.js";
import type { WebhookEndpointRecord } from "../../../src/domain/webhook/repository.js";

let n = 0;

/** An account with one chatbot (an active one unless `active` is false). */
export async function account(
  store: Store,
  createdAt = 1,
  active = true,
): Promise<{ accountId: string; chatbotId: string; email: string }> {
  const accountId = newId();
  const chatbotId = newId();
  const email = `owner${++n}-${accountId.slice(0, 8)}@example.com`;
  await store.accounts.insert({ accountId, email, passwordHash: null, active, createdAt });
  await store.chatbots.insert({
    chatbotId,
    accountId,
    name: "bot",
    allowedOrigins: ["https://shop.example"],
    knowledge: [],
    agent: { kind: "built_in" },
    appearance: DEFAULT_APPEARANCE,
    active: true,
    createdAt,
  });
  return { accountId, chatbotId, email };
}

/** An enabled webhook endpoint of the account, for every event type, that has never failed. */
export async function endpoint(store: Store, accountId: string): Promise<WebhookEndpointRecord> {
  const e: WebhookEndpointRecord = {
    endpointId: newId(),
    accountId,
    url: "https://hooks.example/x",
    eventTypes: [],
    description: "",
    secretSealed: "sealed",
    enabled: true,
    disabledReason: "",
    createdAt: 1,
    failingSince: null,
  };
  await store.webhooks.insertEndpoint(e);
  return e;
}

/** An account with no chatbot (e-mail `<id>@x.example`, created at 1); answers its id. */
export async function bareAccount(store: Store): Promise<string> {
  const accountId = newId();
  await store.accounts.insert({
    accountId,
    email: `${accountId}@x.example`,
    passwordHash: null,
    active: true,
    createdAt: 1,
  });
  return accountId;
}

/** The contact list's query for the account: every contact, no search, the first 10. */
export const contactQuery = (accountId: string, o: Partial<ContactQuery> = {}): ContactQuery => ({
  accountId,
  search: "",
  filter: "all",
  assignee: null,
  limit: 10,
  offset: 0,
  liveSince: 0,
  ...o,
});

/** An unrevoked, unexpired, never used API key record of the account (a fresh id and hash unless given). */
export function apiKeyRecord(accountId: string, o: Partial<ApiKeyRecord> = {}): ApiKeyRecord {
  return {
    apiKeyId: newId(),
    accountId,
    keyHash: newId(),
    hint: "cak_x",
    name: "",
    createdAt: 1,
    revokedAt: null,
    expiresAt: null,
    lastUsedAt: null,
    ...o,
  };
}

/** Appends one message by `role`; starts the conversation when `start` is true. */
export function message(
  store: Pick<Store, "conversations">,
  a: { accountId: string; chatbotId: string },
  conversationId: string,
  o: { userId?: string; role?: MessageRole; at: number; content?: string; start?: boolean },
): Promise<MessageRecord> {
  const role = o.role ?? "user";
  return store.conversations.append(
    conversationId,
    {
      messageId: newId(),
      role,
      content: o.content ?? `${role} at ${o.at}`,
      toolCalls: "",
      documents: [],
      createdAt: o.at,
    },
    messageEffect(role),
    o.start
      ? {
          conversationId,
          accountId: a.accountId,
          chatbotId: a.chatbotId,
          userId: o.userId ?? "u1",
          channel: "web",
          ...NEW_CONVERSATION,
        }
      : undefined,
  );
}

/** A `message.created` event of the account, ordered by `orderKey` (a conversation's id in the log's terms). */
export function event(accountId: string, orderKey: string): NewEvent {
  return {
    eventId: newId(),
    accountId,
    type: "message.created",
    orderKey,
    data: { conversationId: orderKey },
    createdAt: 1,
  };
}
