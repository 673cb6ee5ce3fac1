import type { EventTopic } from "../domain/conversation/events.js";
import type { TypingChannel, TypingSignal } from "../domain/typing/channel.js";

type Listener = (signal: TypingSignal) => void;

/** Typing signals within one process: delivered at once to the conversation's and the account's listeners. */
export class InProcessTyping implements TypingChannel {
  private readonly byConversation = new Map<string, Set<Listener>>();
  private readonly byAccount = new Map<string, Set<Listener>>();

  publish(signal: TypingSignal): void {
    for (const set of [this.byConversation.get(signal.conversationId), this.byAccount.get(signal.accountId)])
      if (set) for (const l of [...set]) l(signal);
  }

  subscribe(topic: EventTopic, listener: Listener): () => void {
    const [map, key] =
      "conversationId" in topic ? [this.byConversation, topic.conversationId] : [this.byAccount, topic.accountId];
    let set = map.get(key);
    if (!set) map.set(key, (set = new Set()));
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0 && map.get(key) === set) map.delete(key);
    };
  }

  close(): void {
    this.byConversation.clear();
    this.byAccount.clear();
  }
}
