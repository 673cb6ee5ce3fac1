import type pg from "pg";
import type { EventTopic } from "../../domain/log/events.js";
import type { TypingChannel, TypingSignal } from "../../domain/typing/channel.js";
import { PgRelay } from "./relay.js";

const CHANNEL = "aiagent_typing";

interface Local extends TypingChannel {
  close(): void;
}

/**
 * Typing signals across instances over PostgreSQL NOTIFY. Nothing is stored: a signal sent while an instance's
 * listening connection is down is lost, which only leaves an indicator unshown for a moment.
 */
export class PgTyping implements TypingChannel {
  private readonly relay: PgRelay;

  constructor(
    url: string,
    pool: pg.Pool,
    private readonly local: Local,
  ) {
    this.relay = new PgRelay(url, pool, CHANNEL, (w) => {
      if (!w || typeof w.a !== "string" || typeof w.c !== "string" || typeof w.n !== "string") return;
      if (w.f !== "user" && w.f !== "operator" && w.f !== "ai_agent" && w.f !== "viewing" && w.f !== "left") return;
      const email = typeof w.e === "string" ? { email: w.e } : {};
      const chatbot = typeof w.b === "string" ? { chatbotId: w.b } : {};
      this.local.publish({ accountId: w.a, conversationId: w.c, from: w.f, name: w.n, ...email, ...chatbot });
    });
  }

  start(): Promise<void> {
    return this.relay.start();
  }

  publish(s: TypingSignal): void {
    this.local.publish(s);
    this.relay.send({
      a: s.accountId,
      c: s.conversationId,
      f: s.from,
      n: s.name,
      ...(s.email !== undefined ? { e: s.email } : {}),
      ...(s.chatbotId !== undefined ? { b: s.chatbotId } : {}),
    });
  }

  subscribe(topic: EventTopic, listener: (signal: TypingSignal) => void): () => void {
    return this.local.subscribe(topic, listener);
  }

  close(): void {
    this.relay.close();
    this.local.close();
  }
}
