import type { EventTopic } from "./events.js";

/** Listeners by topic: one conversation's, or every conversation's of an account. */
export class TopicListeners<L> {
  private readonly byConversation = new Map<string, Set<L>>();
  private readonly byAccount = new Map<string, Set<L>>();

  /** Adds the listener to its topic; the returned function removes it. */
  add(topic: EventTopic, listener: L): () => void {
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

  /** The listeners of a conversation and of its account (a copy: a listener may unsubscribe while told). */
  of(accountId: string, conversationId: string): L[] {
    const out: L[] = [];
    for (const set of [this.byConversation.get(conversationId), this.byAccount.get(accountId)])
      if (set) out.push(...set);
    return out;
  }

  /** Whether anyone listens to the conversation or its account (one map lookup each). */
  has(accountId: string, conversationId: string): boolean {
    return this.byConversation.has(conversationId) || this.byAccount.has(accountId);
  }

  /** Every listener. */
  all(): L[] {
    return [...this.byConversation.values(), ...this.byAccount.values()].flatMap((s) => [...s]);
  }

  clear(): void {
    this.byConversation.clear();
    this.byAccount.clear();
  }
}
