import { type HostPage, startHostPage } from "../../examples/host-page/server.js";
import type { AppOverrides } from "../../src/app.js";
import { startServer, type TestAccount, type TestServer } from "../helpers/server.js";
import { onFreePort } from "./browser.js";

/** Snippets the built-in agent answers from. */
export const KNOWLEDGE = [
  {
    title: "Shipping",
    url: "https://shop.example/help/shipping",
    snippet: "Orders ship within 2 business days; delivery takes 3 to 5 days within the EU.",
  },
  {
    title: "Returns",
    url: "https://shop.example/help/returns",
    snippet: "You can return any item within 30 days for a full refund; the return label is free.",
  },
];

/** The service, and a client's host page on another origin that embeds the service's frame. */
export interface Embedding {
  service: TestServer;
  account: TestAccount;
  host: HostPage;
  /** The frame's origin: the service under the name localhost, so it differs from the host page's 127.0.0.1. */
  frameOrigin: string;
  hostOrigin: string;
  close(): Promise<void>;
}

/** Starts the service and the example host page (examples/host-page) on two loopback ports. */
export async function startEmbedding(
  opts: { env?: Record<string, string>; overrides?: AppOverrides; extraOrigins?: string[]; pageOrigin?: string } = {},
): Promise<Embedding> {
  const service = await startServer({ env: opts.env ?? {}, ...(opts.overrides ? { overrides: opts.overrides } : {}) });
  const frameOrigin = service.url.replace("127.0.0.1", "localhost");
  const made = await service.account();
  // The chatbot allows the page's origin, so its port is chosen first; taken before the page listened, the chatbot
  // and the page are made again on another.
  const { hostOrigin, account, host } = await onFreePort(async (port) => {
    const hostOrigin = `http://127.0.0.1:${port}`;
    const chatbot = await service.app.accounts.createChatbot(
      made.email,
      "Shop assistant",
      [hostOrigin, ...(opts.extraOrigins ?? [])],
      KNOWLEDGE,
    );
    const account = { ...made, chatbotId: chatbot.chatbotId };
    const host = await startHostPage({
      serviceUrl: service.url,
      appUrl: frameOrigin,
      clientApiKey: account.apiKey,
      chatbotId: account.chatbotId,
      port,
      ...(opts.pageOrigin ? { pageOrigin: opts.pageOrigin } : {}),
    });
    return { hostOrigin, account, host };
  });
  return {
    service,
    account,
    host,
    frameOrigin,
    hostOrigin,
    async close() {
      await host.close();
      await service.close(true);
    },
  };
}
