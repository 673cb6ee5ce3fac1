import type { AccountCaller } from "../caller.js";
import type { Clock } from "../clock.js";
import { notFound } from "../errors.js";
import { IdempotencyKeys } from "../idempotency/keys.js";
import type { IdempotencyRepository } from "../idempotency/repository.js";
import { newId, requireUuid } from "../ids.js";
import { LIMITS } from "../limits.js";
import type { EventLog, LogTx } from "../log/event-log.js";
import type { Transact } from "../unit.js";
import { requireContent } from "../validate.js";
import { mayAccess } from "./owners.js";
import type { ConversationRepository, NoteRecord, NoteRepository } from "./repository.js";

/** Notes a conversation lists at most: a note is a remark, not a second conversation. */
export const MAX_NOTES = 500;

/** What notes need. */
export interface NoteDeps {
  conversations: Pick<ConversationRepository, "byId">;
  notes: Pick<NoteRepository, "forConversation">;
  clock: Clock;
  idempotency: Pick<IdempotencyRepository, "find">;
  transaction: Transact<LogTx & { notes: NoteRepository; idempotency: IdempotencyRepository }>;
  log: EventLog;
}

/**
 * Internal notes. A note is written with its `note.created` event in one unit of work: the event log carries it to
 * the account's watchers (on every instance) and webhooks; the frame's reads never look at notes or at that event.
 */
export class ConversationNotes {
  private readonly keys: IdempotencyKeys;

  constructor(private readonly d: NoteDeps) {
    this.keys = new IdempotencyKeys(d.idempotency, d.clock);
  }

  async add(caller: AccountCaller, conversationId: string, content: string, idempotencyKey?: string) {
    const id = requireUuid("conversation_id", conversationId);
    const text = requireContent("content", content, LIMITS.note);
    const conv = await this.d.conversations.byId(id);
    // Another account's conversation answers exactly as one that does not exist.
    if (!mayAccess(caller, conv)) throw notFound("conversation");
    const keyed = this.keys.request(caller, idempotencyKey, "add_note", { conversationId: id, content: text });
    const note = await this.keys.once(keyed, () =>
      this.d.transaction(async (tx) => {
        const n: NoteRecord = {
          noteId: newId(),
          accountId: caller.accountId,
          conversationId: id,
          authorEmail: caller.email,
          content: text,
          createdAt: this.d.clock.now(),
        };
        await tx.notes.add(n);
        await this.d.log.record(tx, caller.accountId, [
          { type: "note.created", data: { conversationId: id, note: n } },
        ]);
        await this.keys.record(tx, keyed, n);
        return n;
      }),
    );
    // The store announces the note's event once committed: the watchers and the dispatcher of every instance wake.
    return note;
  }

  async list(caller: AccountCaller, conversationId: string): Promise<NoteRecord[]> {
    const id = requireUuid("conversation_id", conversationId);
    const conv = await this.d.conversations.byId(id);
    if (!mayAccess(caller, conv)) throw notFound("conversation");
    return this.d.notes.forConversation(id, MAX_NOTES);
  }
}
