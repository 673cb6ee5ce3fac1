import type { App } from "./app.js";
import type { KnowledgeSnippet } from "./domain/account/repository.js";

/** The demo as this start made or renewed it. */
export interface DemoSetup {
  email: string;
  /** Only on the first start (afterwards only its hash is kept). */
  password?: string;
  chatbotId: string;
  /** Made by this start; a later start revokes it (this instance revokes it itself when it stops). */
  clientApiKey: string;
  apiKeyId: string;
  firstStart: boolean;
  /** Where the demo page may be shown from (the address of the first start). */
  allowedOrigins: string[];
}

export const DEMO_EMAIL = "demo@example.com";

/** What the demo chatbot knows (examples/knowledge.json is the same list, for the README's walkthrough). */
export const DEMO_KNOWLEDGE: KnowledgeSnippet[] = [
  {
    title: "Track your parcel",
    url: "https://example.com/help/tracking",
    snippet:
      "Every order gets a tracking link by e-mail as soon as it ships; it shows where your parcel is and when it " +
      "arrives.",
  },
  {
    title: "Shipping",
    url: "https://example.com/help/shipping",
    snippet: "Orders ship within 2 business days; delivery takes 3 to 5 days within the EU.",
  },
  {
    title: "Returns",
    url: "https://example.com/help/returns",
    snippet: "You can return any item within 30 days for a full refund; the return label is free.",
  },
  {
    title: "Opening hours",
    url: "https://example.com/help/hours",
    snippet: "Our support team answers Monday to Friday, 9:00 to 18:00 CET.",
  },
];

/** The questions the demo page suggests; the built-in agent answers each from DEMO_KNOWLEDGE. */
export const DEMO_QUESTIONS = ["Where is my parcel?", "How long does shipping take?", "Can I return an item?"];

const DEMO_CHATBOT_NAME = "Demo assistant";
/** The label of the keys the demo bootstrap prints (other keys of the demo account are the owner's). */
export const DEMO_KEY_NAME = "demo page";
/**
 * Instances started within this of each other share the demo: neither revokes the key the other printed (each
 * revokes its own when it stops; a later start revokes what a killed one left).
 */
const STARTED_TOGETHER_MS = 60_000;

/**
 * Outside production: on an empty database, a demo account, chatbot and API key; on a later start with the demo
 * account present, a new demo API key (earlier starts' demo keys are revoked, unless just printed by an instance
 * started together with this one), since only its hash was kept and the /demo page needs the key itself. Other keys
 * of the demo account are left alone.
 */
export async function bootstrapDemo(
  app: Pick<App, "accounts" | "store">,
  publicUrl: string,
): Promise<DemoSetup | undefined> {
  // One unit of work: instances starting at once on one database make one demo account between them (on
  // PostgreSQL the losers of the race are run again and find it made).
  return app.store.transaction(() => bootstrapOnce(app, publicUrl));
}

async function bootstrapOnce(app: Pick<App, "accounts" | "store">, publicUrl: string): Promise<DemoSetup | undefined> {
  const { accounts, store } = app;
  if (!(await accounts.hasAccounts())) {
    const password = `demo-${Math.random().toString(36).slice(2, 10)}`;
    const account = await accounts.createAccount(DEMO_EMAIL, password);
    const origin = new URL(publicUrl).origin;
    const chatbot = await accounts.createChatbot(DEMO_EMAIL, DEMO_CHATBOT_NAME, [origin], DEMO_KNOWLEDGE);
    const key = await accounts.createApiKey(DEMO_EMAIL, DEMO_KEY_NAME);
    await store.demoSetup.set({ accountId: account.accountId, chatbotId: chatbot.chatbotId, apiKeyId: key.apiKeyId });
    return {
      email: DEMO_EMAIL,
      password,
      chatbotId: chatbot.chatbotId,
      clientApiKey: key.clientApiKey,
      apiKeyId: key.apiKeyId,
      firstStart: true,
      allowedOrigins: chatbot.allowedOrigins,
    };
  }
  const account = await store.accounts.byEmail(DEMO_EMAIL);
  if (!account?.active) return undefined;
  const setup = await store.demoSetup.get();
  // A database from before the setup was recorded: the demo chatbot is the demo account's first one of that name.
  const chatbot =
    (setup && setup.accountId === account.accountId ? await store.chatbots.byId(setup.chatbotId) : undefined) ??
    (await store.chatbots.listForAccount(account.accountId)).find((c) => c.name === DEMO_CHATBOT_NAME);
  if (!chatbot?.active) return undefined;
  return store.transaction(async (tx) => {
    const key = await accounts.createApiKey(DEMO_EMAIL, DEMO_KEY_NAME, tx);
    const keys = await tx.apiKeys.listForAccount(account.accountId);
    const now = keys.find((k) => k.apiKeyId === key.apiKeyId)!.createdAt;
    // Earlier starts' demo keys (the recorded one, from before keys were named, included), but not one printed by an
    // instance started at about the same time: it is likely running and showing /demo with it.
    const stale = keys.filter(
      (k) =>
        k.revokedAt === null &&
        k.apiKeyId !== key.apiKeyId &&
        (k.name === DEMO_KEY_NAME || (setup?.accountId === account.accountId && k.apiKeyId === setup.apiKeyId)) &&
        now - k.createdAt >= STARTED_TOGETHER_MS,
    );
    for (const k of stale) await accounts.revokeApiKey(DEMO_EMAIL, k.apiKeyId, tx);
    await tx.demoSetup.set({ accountId: account.accountId, chatbotId: chatbot.chatbotId, apiKeyId: key.apiKeyId });
    return {
      email: DEMO_EMAIL,
      chatbotId: chatbot.chatbotId,
      clientApiKey: key.clientApiKey,
      apiKeyId: key.apiKeyId,
      firstStart: false,
      allowedOrigins: chatbot.allowedOrigins,
    } satisfies DemoSetup;
  });
}
