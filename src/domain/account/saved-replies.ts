import type { AccountCaller } from "../caller.js";
import type { Clock } from "../clock.js";
import { DomainError, invalidArgument, notFound } from "../errors.js";
import { newId, requireUuid } from "../ids.js";
import { LIMITS } from "../limits.js";
import { requireContent } from "../validate.js";

/** A canned answer of the account, picked in the reply box by its shortcut. */
export interface SavedReplyRecord {
  savedReplyId: string;
  accountId: string;
  shortcut: string;
  content: string;
  createdAt: number;
  updatedAt: number;
}

/** Storage of saved replies; a shortcut is unique in its account (answered as false by add/update). */
export interface SavedReplyRepository {
  /** The account's saved replies by shortcut, at most `limit`. */
  list(accountId: string, limit: number): Promise<SavedReplyRecord[]>;
  get(accountId: string, savedReplyId: string): Promise<SavedReplyRecord | undefined>;
  /** False when the account has a saved reply with this shortcut already. */
  add(r: SavedReplyRecord): Promise<boolean>;
  /** False when another saved reply of the account has this shortcut. */
  update(r: SavedReplyRecord): Promise<boolean>;
  /** False when there was none. */
  remove(accountId: string, savedReplyId: string): Promise<boolean>;
}

export const MAX_SAVED_REPLIES = 500;
const SHORTCUT = /^[A-Za-z0-9_-]{1,40}$/;

function shortcut(v: string): string {
  const s = v.trim();
  if (s === "") throw invalidArgument("shortcut", "is required");
  if (!SHORTCUT.test(s)) throw invalidArgument("shortcut", "must be 1 to 40 letters, digits, - or _");
  return s.toLowerCase();
}

function taken(s: string): DomainError {
  return new DomainError("already_exists", `shortcut: the account has a saved reply "${s}" already`);
}

/** Saved replies: admins manage them (the gate admits only them to the writes), every person uses them. */
export class SavedReplies {
  constructor(private readonly d: { savedReplies: SavedReplyRepository; clock: Clock }) {}

  list(caller: AccountCaller): Promise<SavedReplyRecord[]> {
    return this.d.savedReplies.list(caller.accountId, MAX_SAVED_REPLIES);
  }

  async create(caller: AccountCaller, input: { shortcut: string; content: string }): Promise<SavedReplyRecord> {
    const s = shortcut(input.shortcut);
    const content = requireContent("content", input.content, LIMITS.savedReply);
    if ((await this.d.savedReplies.list(caller.accountId, MAX_SAVED_REPLIES)).length >= MAX_SAVED_REPLIES)
      throw new DomainError("resource_exhausted", `an account keeps at most ${MAX_SAVED_REPLIES} saved replies`);
    const now = this.d.clock.now();
    const r = {
      savedReplyId: newId(),
      accountId: caller.accountId,
      shortcut: s,
      content,
      createdAt: now,
      updatedAt: now,
    };
    if (!(await this.d.savedReplies.add(r))) throw taken(s);
    return r;
  }

  async update(
    caller: AccountCaller,
    input: { savedReplyId: string; shortcut: string | undefined; content: string | undefined },
  ): Promise<SavedReplyRecord> {
    const id = requireUuid("saved_reply_id", input.savedReplyId);
    const s = input.shortcut === undefined ? undefined : shortcut(input.shortcut);
    const content =
      input.content === undefined ? undefined : requireContent("content", input.content, LIMITS.savedReplyUpdate);
    const old = await this.d.savedReplies.get(caller.accountId, id);
    if (!old) throw notFound("saved reply");
    const r = { ...old, shortcut: s ?? old.shortcut, content: content ?? old.content, updatedAt: this.d.clock.now() };
    if (!(await this.d.savedReplies.update(r))) throw taken(r.shortcut);
    return r;
  }

  async remove(caller: AccountCaller, savedReplyId: string): Promise<void> {
    const id = requireUuid("saved_reply_id", savedReplyId);
    if (!(await this.d.savedReplies.remove(caller.accountId, id))) throw notFound("saved reply");
  }
}
