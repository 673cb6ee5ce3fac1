import type { AccountCaller } from "../caller.js";
import type { Clock } from "../clock.js";
import { DomainError, invalidArgument, notFound, permissionDenied } from "../errors.js";
import { newId, requireUuid } from "../ids.js";
import { LIMITS } from "../limits.js";
import { requireContent } from "../validate.js";

/** A canned answer of the account, picked in the reply box by its shortcut. */
export interface SavedReplyRecord {
  savedReplyId: string;
  accountId: string;
  /** The member whose personal reply it is (the account's id for its owner); "" when the account shares it. */
  ownerId: string;
  shortcut: string;
  content: string;
  createdAt: number;
  updatedAt: number;
}

/**
 * Storage of saved replies; a shortcut is unique per owner: among the account's shared ones, and among each person's
 * own (answered as false by add/update).
 */
export interface SavedReplyRepository {
  /** The account's shared saved replies and those `ownerId` owns, by shortcut, at most `limit`. */
  list(accountId: string, ownerId: string, limit: number): Promise<SavedReplyRecord[]>;
  /** The account's saved reply, whoever owns it (the domain decides who sees it). */
  get(accountId: string, savedReplyId: string): Promise<SavedReplyRecord | undefined>;
  /** False when its owner (or the account, for a shared one) has a saved reply with this shortcut already. */
  add(r: SavedReplyRecord): Promise<boolean>;
  /** False when another saved reply of the same owner has this shortcut; never changes the owner. */
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

function taken(s: string, personal: boolean): DomainError {
  return new DomainError(
    "already_exists",
    personal
      ? `shortcut: you have a personal saved reply "${s}" already`
      : `shortcut: the account has a saved reply "${s}" already`,
  );
}

/**
 * Saved replies: the account's shared ones, which admins manage and every person uses, and each person's personal
 * ones, which only that person sees and changes (another person's answers as one that does not exist).
 */
export class SavedReplies {
  constructor(private readonly d: { savedReplies: SavedReplyRepository; clock: Clock }) {}

  list(caller: AccountCaller): Promise<SavedReplyRecord[]> {
    return this.d.savedReplies.list(caller.accountId, caller.memberId, MAX_SAVED_REPLIES);
  }

  async create(
    caller: AccountCaller,
    input: { shortcut: string; content: string; personal?: boolean | undefined },
  ): Promise<SavedReplyRecord> {
    const personal = input.personal === true;
    if (!personal && caller.role !== "admin")
      throw permissionDenied("only admins add shared saved replies; add a personal one (personal: true)");
    const s = shortcut(input.shortcut);
    const content = requireContent("content", input.content, LIMITS.savedReply);
    const ownerId = personal ? caller.memberId : "";
    const mine = (await this.d.savedReplies.list(caller.accountId, ownerId, 2 * MAX_SAVED_REPLIES + 1)).filter(
      (r) => r.ownerId === ownerId,
    );
    if (mine.length >= MAX_SAVED_REPLIES)
      throw new DomainError(
        "resource_exhausted",
        personal
          ? `a person keeps at most ${MAX_SAVED_REPLIES} personal saved replies`
          : `an account keeps at most ${MAX_SAVED_REPLIES} saved replies`,
      );
    const now = this.d.clock.now();
    const r = {
      savedReplyId: newId(),
      accountId: caller.accountId,
      ownerId,
      shortcut: s,
      content,
      createdAt: now,
      updatedAt: now,
    };
    if (!(await this.d.savedReplies.add(r))) throw taken(s, personal);
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
    const old = await this.writable(caller, id);
    const r = { ...old, shortcut: s ?? old.shortcut, content: content ?? old.content, updatedAt: this.d.clock.now() };
    if (!(await this.d.savedReplies.update(r))) throw taken(r.shortcut, r.ownerId !== "");
    return r;
  }

  async remove(caller: AccountCaller, savedReplyId: string): Promise<void> {
    const id = requireUuid("saved_reply_id", savedReplyId);
    await this.writable(caller, id);
    if (!(await this.d.savedReplies.remove(caller.accountId, id))) throw notFound("saved reply");
  }

  /** The saved reply the caller may change: a shared one for an admin, their own personal one for anyone. */
  private async writable(caller: AccountCaller, id: string): Promise<SavedReplyRecord> {
    const r = await this.d.savedReplies.get(caller.accountId, id);
    // Another person's personal reply answers exactly as one that does not exist.
    if (!r || (r.ownerId !== "" && r.ownerId !== caller.memberId)) throw notFound("saved reply");
    if (r.ownerId === "" && caller.role !== "admin") throw permissionDenied("only admins change shared saved replies");
    return r;
  }
}
