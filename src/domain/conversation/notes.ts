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
import { type Mentionable, type MentionRepository, mentionedPeople, type PeopleOf } from "./mentions.js";
import { mayAccess } from "./owners.js";
import type { ConversationRepository, NoteRecord, NoteRepository } from "./repository.js";

/** Notes a conversation lists at most: a note is a remark, not a second conversation. */
export const MAX_NOTES = 500;

/** What notes need. */
export interface NoteDeps {
  conversations: Pick<ConversationRepository, "byId">;
  notes: Pick<NoteRepository, "forConversation">;
  mentions: Pick<MentionRepository, "forNotes">;
  /** Who may be mentioned in an account. */
  people: PeopleOf;
  clock: Clock;
  idempotency: Pick<IdempotencyRepository, "find">;
  transaction: Transact<
    LogTx & { notes: NoteRepository; mentions: MentionRepository; idempotency: IdempotencyRepository }
  >;
  log: EventLog;
}

/** Told once a note that mentions people is stored (the mention e-mails); its failure is its own, not the note's. */
export type MentionAlert = (note: NoteRecord, people: Mentionable[]) => Promise<void>;

/**
 * Internal notes. A note is written with its `note.created` event in one unit of work: the event log carries it to
 * the account's watchers (on every instance) and webhooks; the frame's reads never look at notes or at that event.
 */
export class ConversationNotes {
  private readonly keys: IdempotencyKeys;
  private mentioned: MentionAlert | undefined;

  constructor(private readonly d: NoteDeps) {
    this.keys = new IdempotencyKeys(d.idempotency, d.clock);
  }

  async add(
    caller: AccountCaller,
    conversationId: string,
    content: string,
    idempotencyKey?: string,
    mentionIds: string[] = [],
  ) {
    const id = requireUuid("conversation_id", conversationId);
    const text = requireContent("content", content, LIMITS.note);
    const conv = await this.d.conversations.byId(id);
    // Another account's conversation answers exactly as one that does not exist.
    if (!mayAccess(caller, conv)) throw notFound("conversation");
    // Only the account's own people: another account's member is refused, naming the field, and nothing is stored.
    const people = await mentionedPeople(this.d.people, caller, mentionIds);
    const mentioned = people.map((p) => p.memberId);
    const keyed = this.keys.request(caller, idempotencyKey, "add_note", {
      conversationId: id,
      content: text,
      ...(mentioned.length > 0 ? { mentioned } : {}),
    });
    let fresh = false;
    const note = await this.keys.once(keyed, () =>
      this.d.transaction(async (tx) => {
        const n: NoteRecord = {
          noteId: newId(),
          accountId: caller.accountId,
          conversationId: id,
          authorEmail: caller.email,
          content: text,
          createdAt: this.d.clock.now(),
          ...(mentioned.length > 0 ? { mentionedMemberIds: mentioned } : {}),
        };
        await tx.notes.add(n);
        if (mentioned.length > 0)
          await tx.mentions.add(
            mentioned.map((memberId) => ({
              noteId: n.noteId,
              memberId,
              accountId: n.accountId,
              conversationId: id,
              authorEmail: n.authorEmail,
              createdAt: n.createdAt,
              readAt: null,
            })),
          );
        fresh = true;
        await this.d.log.record(tx, caller.accountId, [
          { type: "note.created", data: { conversationId: id, note: n } },
        ]);
        await this.keys.record(tx, keyed, n);
        return n;
      }),
    );
    // The store announces the note's event once committed: the watchers and the dispatcher of every instance wake.
    // The people mentioned get their e-mail (where they want it) after the commit, never twice for a retried key.
    if (fresh && people.length > 0 && this.mentioned) await this.mentioned(note, people);
    return note;
  }

  /** Sets who is told of mentions (the e-mail, composed after the notes). */
  alertMentionsWith(alert: MentionAlert | undefined): void {
    this.mentioned = alert;
  }

  async list(caller: AccountCaller, conversationId: string): Promise<NoteRecord[]> {
    const id = requireUuid("conversation_id", conversationId);
    const conv = await this.d.conversations.byId(id);
    if (!mayAccess(caller, conv)) throw notFound("conversation");
    const notes = await this.d.notes.forConversation(id, MAX_NOTES);
    const mentions = notes.length === 0 ? [] : await this.d.mentions.forNotes(notes.map((n) => n.noteId));
    return notes.map((n) => {
      const ids = mentions.filter((m) => m.noteId === n.noteId).map((m) => m.memberId);
      return ids.length > 0 ? { ...n, mentionedMemberIds: ids } : n;
    });
  }
}
