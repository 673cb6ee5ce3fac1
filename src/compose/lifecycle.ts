import type { App } from "../app.js";
import { listen } from "../protocol/http/server.js";
import type { AccountParts } from "./accounts.js";
import { WATCH_PATHS } from "./api.js";
import type { Base } from "./base.js";
import type { ConversationParts } from "./conversations.js";
import type { MailParts } from "./mail.js";
import type { PrivacyParts } from "./privacy.js";
import type { TimerParts } from "./timers.js";
import type { TokenParts } from "./tokens.js";
import type { WebhookParts } from "./webhooks.js";

export type LifecycleDeps = Pick<TokenParts, "stopKeyWatch"> &
  Pick<ConversationParts, "events" | "stopLogWatch" | "streams" | "typingChannel"> &
  Pick<PrivacyParts, "retention" | "stopErasureWatch"> &
  Pick<WebhookParts, "dispatcher"> &
  Pick<AccountParts, "knowledge" | "extractWorker"> &
  Pick<MailParts, "startMail" | "stopMail"> &
  Pick<TimerParts, "startTimers" | "stopTimers"> & {
    /** The app's handler once wired (read when the server starts). */
    handler: () => App["handler"];
    /** Told the server's address once it listens. */
    listening: (url: string) => void;
  };

/** Starting and stopping: the background parts start with the server, and everything stops in order. */
export function lifecycle(b: Base, d: LifecycleDeps): Pick<App, "listen" | "close"> {
  const { config, log, store } = b;
  const { dispatcher, retention, streams, events, typingChannel } = d;
  return {
    listen: async () => {
      dispatcher?.start();
      retention.start();
      // Sources queued (or left indexing by a stopped process) are indexed in the background.
      d.knowledge.start();
      await d.startMail();
      d.startTimers();
      const server = await listen(
        d.handler(),
        config.port,
        config.host,
        config.http,
        (path) => WATCH_PATHS.has(path),
        log,
      );
      d.listening(server.url);
      return {
        ...server,
        // Watch streams never finish by themselves: they end first, so shutdown waits only for real requests.
        close: async (graceMs) => {
          streams.close();
          events.close();
          typingChannel.close();
          await dispatcher?.close();
          await retention.close();
          await d.knowledge.close();
          await d.stopMail();
          await d.stopTimers();
          return server.close(graceMs);
        },
      };
    },
    close: async () => {
      await dispatcher?.close();
      await retention.close();
      await d.knowledge.close();
      await d.stopMail();
      await d.stopTimers();
      await d.extractWorker.close();
      d.stopKeyWatch();
      d.stopErasureWatch();
      d.stopLogWatch();
      streams.close();
      events.close();
      typingChannel.close();
      await store.close();
    },
  };
}
