import type { EventTopic } from "../domain/log/events.js";
import { TopicListeners } from "../domain/log/topics.js";
import type { TypingChannel, TypingSignal } from "../domain/typing/channel.js";

type Listener = (signal: TypingSignal) => void;

/** Typing signals within one process: delivered at once to the conversation's and the account's listeners. */
export class InProcessTyping implements TypingChannel {
  private readonly listeners = new TopicListeners<Listener>();

  publish(signal: TypingSignal): void {
    for (const l of this.listeners.of(signal.accountId, signal.conversationId)) l(signal);
  }

  subscribe(topic: EventTopic, listener: Listener): () => void {
    return this.listeners.add(topic, listener);
  }

  close(): void {
    this.listeners.clear();
  }
}
