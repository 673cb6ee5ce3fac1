import type { MemberRepository } from "../account/repository.js";
import type { AccountCaller } from "../caller.js";
import type { Clock } from "../clock.js";
import { invalidArgument } from "../errors.js";
import { requireUuid } from "../ids.js";

/** One person a note mentions: read by that person's Mentions view until they open it. */
export interface MentionRecord {
  noteId: string;
  /** The person mentioned: a member's id, or the account's id for its owner. */
  memberId: string;
  accountId: string;
  conversationId: string;
  authorEmail: string;
  createdAt: number;
  /** When the person opened it; null while unread. */
  readAt: number | null;
}

/** A mention as the person's list shows it: with the note's text. */
export interface MentionView extends MentionRecord {
  content: string;
}

/** Storage of mentions; they go with their note (erasure and retention delete them by conversation). */
export interface MentionRepository {
  add(mentions: MentionRecord[]): Promise<void>;
  /** The mentions of these notes (a note's list shows whom it mentions). */
  forNotes(noteIds: string[]): Promise<MentionRecord[]>;
  /** The person's mentions in the account, newest first, at most `limit`, with their notes' text. */
  forMember(accountId: string, memberId: string, limit: number): Promise<MentionView[]>;
  /** Marks the person's unread mentions of these notes (all: every one) read at `at`; answers how many. */
  markRead(accountId: string, memberId: string, noteIds: string[] | "all", at: number): Promise<number>;
}

/** Whether a person wants an e-mail when mentioned (stored beside their profile; on until they turn it off). */
export interface MentionAlertRepository {
  emailAlerts(accountId: string, email: string): Promise<boolean>;
  setEmailAlerts(accountId: string, email: string, on: boolean, now: number): Promise<void>;
}

/** A person of the account who may be mentioned. */
export interface Mentionable {
  memberId: string;
  email: string;
  displayName: string;
}

/** The most people one note mentions. */
export const MAX_MENTIONS = 20;
/** The most mentions a person's list shows (and counts unread among). */
export const MAX_MENTION_LIST = 500;

/** Who may be mentioned in an account: its owner and the members who joined, with their display names. */
export type PeopleOf = (accountId: string) => Promise<Mentionable[]>;

/** The people of an account from its repositories: the owner first, then the joined members by e-mail. */
export function peopleOf(d: {
  accounts: { byId(accountId: string): Promise<{ accountId: string; email: string } | undefined> };
  members: Pick<MemberRepository, "listForAccount">;
  profiles: { get(accountId: string, email: string): Promise<{ displayName: string } | undefined> };
}): PeopleOf {
  return async (accountId) => {
    const [account, members] = await Promise.all([d.accounts.byId(accountId), d.members.listForAccount(accountId)]);
    const people = [
      ...(account ? [{ memberId: account.accountId, email: account.email }] : []),
      ...members.filter((m) => m.joinedAt !== null).map((m) => ({ memberId: m.memberId, email: m.email })),
    ];
    return Promise.all(
      people.map(async (p) => ({
        ...p,
        displayName: (await d.profiles.get(accountId, p.email.toLowerCase()))?.displayName || p.email.split("@")[0]!,
      })),
    );
  };
}

/**
 * The people a note mentions, checked: each a uuid of a person of the caller's account (another account's member,
 * an invited person who has not joined, or an unknown id is refused naming the field), each once.
 */
export async function mentionedPeople(people: PeopleOf, caller: AccountCaller, ids: string[]): Promise<Mentionable[]> {
  if (ids.length === 0) return [];
  if (ids.length > MAX_MENTIONS) throw invalidArgument("mention_member_ids", `at most ${MAX_MENTIONS} people`);
  const wanted = [...new Set(ids.map((id) => requireUuid("mention_member_ids", id).toLowerCase()))];
  const all = await people(caller.accountId);
  return wanted.map((id) => {
    const p = all.find((x) => x.memberId.toLowerCase() === id);
    if (!p) throw invalidArgument("mention_member_ids", `${id} is not a person of this account`);
    return p;
  });
}

/** A person's Mentions: the notes that mention them, marking them read, and whether they want e-mail. */
export class Mentions {
  constructor(
    private readonly d: {
      mentions: Pick<MentionRepository, "forMember" | "markRead">;
      alerts: MentionAlertRepository;
      people: PeopleOf;
      clock: Clock;
    },
  ) {}

  people(caller: AccountCaller): Promise<Mentionable[]> {
    return this.d.people(caller.accountId);
  }

  async list(caller: AccountCaller, limit: number | undefined) {
    const n = limit ?? 50;
    if (!Number.isInteger(n) || n < 1 || n > 100) throw invalidArgument("limit", "must be 1 to 100");
    const [all, people, emailAlerts] = await Promise.all([
      this.d.mentions.forMember(caller.accountId, caller.memberId, MAX_MENTION_LIST),
      this.d.people(caller.accountId),
      this.d.alerts.emailAlerts(caller.accountId, caller.email.toLowerCase()),
    ]);
    const name = (email: string) =>
      people.find((p) => p.email.toLowerCase() === email.toLowerCase())?.displayName || email.split("@")[0]!;
    return {
      mentions: all.slice(0, n).map((m) => ({ ...m, authorName: name(m.authorEmail) })),
      unread: all.filter((m) => m.readAt === null).length,
      emailAlerts,
    };
  }

  async markRead(caller: AccountCaller, noteIds: string[]): Promise<number> {
    const ids = noteIds.map((id) => requireUuid("note_ids", id));
    if (ids.length > MAX_MENTION_LIST) throw invalidArgument("note_ids", `at most ${MAX_MENTION_LIST}`);
    return this.d.mentions.markRead(
      caller.accountId,
      caller.memberId,
      ids.length === 0 ? "all" : ids,
      this.d.clock.now(),
    );
  }

  async setEmailAlerts(caller: AccountCaller, on: boolean): Promise<boolean> {
    await this.d.alerts.setEmailAlerts(caller.accountId, caller.email.toLowerCase(), on, this.d.clock.now());
    return on;
  }
}
