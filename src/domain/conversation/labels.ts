import type { AccountCaller } from "../caller.js";
import type { Clock } from "../clock.js";
import { DomainError, invalidArgument, notFound } from "../errors.js";
import { newId, requireUuid } from "../ids.js";
import type { EventLog, LogTx } from "../log/event-log.js";
import type { Transact } from "../unit.js";
import { requireText } from "../validate.js";
import { type NameOf, nameFor, recordActivity } from "./activity.js";
import { mayAccess } from "./owners.js";
import type { ActivityRepository, ConversationRepository, TimerRepository } from "./repository.js";
import { PRIORITIES, type Priority } from "./rules.js";
import { foldForSearch } from "./search-fold.js";

/** An account-wide label that its people put on conversations ("refund", "VIP"). */
export interface LabelRecord {
  labelId: string;
  accountId: string;
  name: string;
  createdAt: number;
}

/** Storage of labels and of which conversations carry them; a name is unique in its account (folded). */
export interface LabelRepository {
  /** The account's labels by name, at most `limit`. */
  list(accountId: string, limit: number): Promise<LabelRecord[]>;
  /** False when the account has a label of this name (folded) already. */
  add(label: LabelRecord, nameKey: string): Promise<boolean>;
  /** "missing" when the account has no such label, "taken" when another of its labels has the name. */
  rename(accountId: string, labelId: string, name: string, nameKey: string): Promise<"ok" | "missing" | "taken">;
  /** Removes the label from the account and from every conversation; false when there was none. */
  remove(accountId: string, labelId: string): Promise<boolean>;
  /** The label ids on a conversation. */
  forConversation(conversationId: string): Promise<string[]>;
  /** Replaces the labels on a conversation. */
  setForConversation(accountId: string, conversationId: string, labelIds: readonly string[]): Promise<void>;
  /** A conversation's priority ("none" when it has none). */
  priority(conversationId: string): Promise<Priority>;
  setPriority(conversationId: string, priority: Priority): Promise<void>;
}

export { PRIORITIES, type Priority } from "./rules.js";

export const MAX_LABELS = 200;
/** Labels on one conversation at most. */
export const MAX_LABELS_PER_CONVERSATION = 20;
const MAX_NAME = 40;

function labelName(v: string): { name: string; key: string } {
  const name = requireText("name", v.trim(), MAX_NAME);
  return { name, key: foldForSearch(name) };
}

function taken(name: string): DomainError {
  return new DomainError("already_exists", `name: the account has a label "${name}" already`);
}

type Deps = {
  labels: LabelRepository;
  conversations: Pick<ConversationRepository, "byId">;
  clock: Clock;
  transaction: Transact<
    { labels: LabelRepository; activities: ActivityRepository; timers: Pick<TimerRepository, "startSla"> } & LogTx
  >;
  log: EventLog;
  nameOf?: NameOf;
};

/**
 * Labels: admins create, rename and delete them (the gate admits only admins to those), every person of the account
 * puts them on conversations. A change of a conversation's labels is a line of its timeline (`labeled`, the names
 * added and removed in `detail`) and a conversation.activity event in the log and webhooks, in one unit of work.
 */
export class ConversationLabels {
  constructor(private readonly d: Deps) {}

  list(caller: AccountCaller): Promise<LabelRecord[]> {
    return this.d.labels.list(caller.accountId, MAX_LABELS);
  }

  async create(caller: AccountCaller, input: { name: string }): Promise<LabelRecord> {
    const { name, key } = labelName(input.name);
    if ((await this.d.labels.list(caller.accountId, MAX_LABELS)).length >= MAX_LABELS)
      throw new DomainError("resource_exhausted", `an account keeps at most ${MAX_LABELS} labels`);
    const label = { labelId: newId(), accountId: caller.accountId, name, createdAt: this.d.clock.now() };
    if (!(await this.d.labels.add(label, key))) throw taken(name);
    return label;
  }

  async rename(caller: AccountCaller, input: { labelId: string; name: string }): Promise<LabelRecord> {
    const id = requireUuid("label_id", input.labelId);
    const { name, key } = labelName(input.name);
    const done = await this.d.labels.rename(caller.accountId, id, name, key);
    if (done === "missing") throw notFound("label");
    if (done === "taken") throw taken(name);
    return (await this.d.labels.list(caller.accountId, MAX_LABELS)).find((l) => l.labelId === id)!;
  }

  async remove(caller: AccountCaller, labelId: string): Promise<void> {
    const id = requireUuid("label_id", labelId);
    if (!(await this.d.labels.remove(caller.accountId, id))) throw notFound("label");
  }

  /** The labels on one of the account's conversations (another account's answers as an unknown one). */
  async ofConversation(caller: AccountCaller, conversationId: string): Promise<string[]> {
    const id = requireUuid("conversation_id", conversationId);
    const conv = await this.d.conversations.byId(id);
    if (!mayAccess(caller, conv)) throw notFound("conversation");
    return this.d.labels.forConversation(id);
  }

  /** The conversation's priority (another account's answers as an unknown one). */
  async priorityOf(caller: AccountCaller, conversationId: string): Promise<Priority> {
    const id = requireUuid("conversation_id", conversationId);
    const conv = await this.d.conversations.byId(id);
    if (!mayAccess(caller, conv)) throw notFound("conversation");
    return this.d.labels.priority(id);
  }

  /** Sets the conversation's priority; a change is a `prioritized` line of its timeline ("low → high"). */
  async setPriority(caller: AccountCaller, conversationId: string, priority: string): Promise<Priority> {
    const id = requireUuid("conversation_id", conversationId);
    const p = PRIORITIES.find((x) => x === priority);
    if (!p) throw invalidArgument("priority", `must be one of ${PRIORITIES.join(", ")}`);
    const conv = await this.d.conversations.byId(id);
    if (!mayAccess(caller, conv)) throw notFound("conversation");
    const actorName = await nameFor(this.d.nameOf, caller.accountId, caller.email);
    return this.d.transaction(async (tx) => {
      const before = await tx.labels.priority(id);
      if (before === p) return p;
      await tx.labels.setPriority(id, p);
      await recordActivity(tx, this.d.log, {
        accountId: caller.accountId,
        conversationId: id,
        kind: "prioritized",
        actorEmail: caller.email,
        actorName,
        fromEmail: "",
        fromName: "",
        toEmail: "",
        toName: "",
        detail: `${before} → ${p}`,
        createdAt: this.d.clock.now(),
      });
      return p;
    });
  }

  /** Puts exactly these labels on the conversation; a change is recorded on its timeline. Answers the label ids. */
  async set(caller: AccountCaller, conversationId: string, labelIds: readonly string[]): Promise<string[]> {
    const id = requireUuid("conversation_id", conversationId);
    if (labelIds.length > MAX_LABELS_PER_CONVERSATION)
      throw invalidArgument("label_ids", `must hold at most ${MAX_LABELS_PER_CONVERSATION} labels`);
    const wanted = [...new Set(labelIds.map((l) => requireUuid("label_ids", l)))];
    const conv = await this.d.conversations.byId(id);
    if (!mayAccess(caller, conv)) throw notFound("conversation");
    const all = new Map((await this.d.labels.list(caller.accountId, MAX_LABELS)).map((l) => [l.labelId, l]));
    // Another account's label is one this account does not have: not found, as any id of nothing is.
    for (const l of wanted) if (!all.has(l)) throw notFound("label");
    const actorName = await nameFor(this.d.nameOf, caller.accountId, caller.email);
    return this.d.transaction(async (tx) => {
      const before = await tx.labels.forConversation(id);
      const added = wanted.filter((l) => !before.includes(l));
      const removed = before.filter((l) => !wanted.includes(l));
      if (added.length === 0 && removed.length === 0) return before;
      await tx.labels.setForConversation(caller.accountId, id, wanted);
      const names = (ids: string[], sign: string) => ids.map((l) => `${sign}${all.get(l)?.name ?? l}`);
      await recordActivity(tx, this.d.log, {
        accountId: caller.accountId,
        conversationId: id,
        kind: "labeled",
        actorEmail: caller.email,
        actorName,
        fromEmail: "",
        fromName: "",
        toEmail: "",
        toName: "",
        detail: [...names(added, "+"), ...names(removed, "-")].join(", "),
        createdAt: this.d.clock.now(),
      });
      return wanted;
    });
  }
}
