/**
 * Which conversations a customer has open in a frame, on this instance: a frame's watch stream enters when it
 * starts and leaves when it ends. A reply is e-mailed only to a customer who was not here since it was written.
 * Another instance's streams are not seen (docs/email.md: with several instances, the check is per instance).
 */
export class CustomerPresence {
  private readonly open = new Map<string, number>();
  private readonly left = new Map<string, number>();

  constructor(private readonly now: () => number) {}

  /** A customer's stream of the conversation started; the returned function ends it (once). */
  enter(conversationId: string): () => void {
    this.open.set(conversationId, (this.open.get(conversationId) ?? 0) + 1);
    let done = false;
    return () => {
      if (done) return;
      done = true;
      const n = (this.open.get(conversationId) ?? 1) - 1;
      if (n > 0) this.open.set(conversationId, n);
      else this.open.delete(conversationId);
      this.left.set(conversationId, this.now());
    };
  }

  /** Whether the customer has the conversation open now, or had it open at `since` or later. */
  seenSince(conversationId: string, since: number): boolean {
    if (this.open.has(conversationId)) return true;
    const left = this.left.get(conversationId);
    return left !== undefined && left >= since;
  }

  /** Forgets conversations left before `before` (called now and then, so the map does not grow for ever). */
  forget(before: number): void {
    for (const [id, at] of this.left) if (at < before) this.left.delete(id);
  }
}
