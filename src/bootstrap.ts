import type { App } from "./app.js";
import type { KnowledgeSnippet } from "./domain/account/repository.js";

/** What the first start made for trying the service out. */
export interface DemoSetup {
  email: string;
  password: string;
  chatbotId: string;
  clientApiKey: string;
}

export const DEMO_EMAIL = "demo@example.com";

/** What the demo chatbot knows (examples/knowledge.json is the same list, for the README's walkthrough). */
export const DEMO_KNOWLEDGE: KnowledgeSnippet[] = [
  {
    title: "Track your parcel",
    url: "https://example.com/help/tracking",
    snippet:
      "Every order gets a tracking link by e-mail as soon as it ships; it shows where your parcel is and when it arrives.",
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

/** On an empty database outside production: a demo account, chatbot and API key, made once. */
export async function bootstrapDemo(app: App, publicUrl: string): Promise<DemoSetup | undefined> {
  if (app.accounts.hasAccounts()) return undefined;
  const password = `demo-${Math.random().toString(36).slice(2, 10)}`;
  await app.accounts.createAccount(DEMO_EMAIL, password);
  const origin = new URL(publicUrl).origin;
  const chatbot = app.accounts.createChatbot(DEMO_EMAIL, "Demo assistant", [origin], DEMO_KNOWLEDGE);
  const key = app.accounts.createApiKey(DEMO_EMAIL);
  return { email: DEMO_EMAIL, password, chatbotId: chatbot.chatbotId, clientApiKey: key.clientApiKey };
}
