import type { AuditLog, AuditTx } from "../audit/audit-log.js";
import type { AccountCaller } from "../caller.js";
import type { Clock } from "../clock.js";
import { DomainError, invalidArgument, notFound } from "../errors.js";
import { newId, requireUuid } from "../ids.js";
import type { Transact } from "../unit.js";
import { requireText } from "../validate.js";
import type { AccountRepository, ChatbotRepository, MemberRepository } from "./repository.js";

/** How a team's new conversations are assigned: not at all, in turn, or to the least loaded (Chatwoot's choices). */
export const ASSIGNMENTS = ["off", "round_robin", "balanced"] as const;
export type Assignment = (typeof ASSIGNMENTS)[number];

/** A team of the account: its people see the chatbots it is given, and may be assigned their new conversations. */
export interface TeamRecord {
  teamId: string;
  accountId: string;
  name: string;
  assignment: Assignment;
  /** Open conversations a member holds at most before auto-assignment passes them by; 0: no limit. */
  capacity: number;
  /** Its members (member ids; the owner's is the account's id), in e-mail order. */
  memberIds: string[];
  /** The chatbots it is given; a chatbot is given to one team at most. */
  chatbotIds: string[];
  createdAt: number;
  updatedAt: number;
}

/** A team's member as stored: the id and the e-mail they sign in (and are assigned) with. */
export interface TeamMember {
  memberId: string;
  email: string;
}

/** Storage of teams; a name is unique in its account (folded), a chatbot is given to one team at most. */
export interface TeamRepository {
  /** The account's teams by name, at most `limit`, with their members and chatbots. */
  list(accountId: string, limit: number): Promise<TeamRecord[]>;
  /** False when the account has a team of this name (folded) already. */
  add(team: Omit<TeamRecord, "memberIds" | "chatbotIds">, nameKey: string): Promise<boolean>;
  /** "missing" when the account has no such team, "taken" when another of its teams has the name. */
  update(
    team: Omit<TeamRecord, "memberIds" | "chatbotIds" | "createdAt">,
    nameKey: string,
  ): Promise<"ok" | "missing" | "taken">;
  /** Replaces a team's members; the team changed `at`. */
  setMembers(accountId: string, teamId: string, members: readonly TeamMember[], at: number): Promise<void>;
  /** Replaces a team's chatbots; the team changed `at`. */
  setChatbots(accountId: string, teamId: string, chatbotIds: readonly string[], at: number): Promise<void>;
  /** Removes the team, its members and chatbots; false when there was none. */
  remove(accountId: string, teamId: string): Promise<boolean>;
  /** The chatbots given to a team the member is not in (what an operator does not see), sorted. */
  hiddenFor(accountId: string, memberId: string): Promise<string[]>;
}

/** What a team change writes: the teams, and the audit log in its unit of work. */
export interface TeamTx extends AuditTx {
  teams: TeamRepository;
}

/** Most teams an account keeps, and most members or chatbots one team is given. */
export const MAX_TEAMS = 100;
export const MAX_TEAM_ITEMS = 200;
const MAX_CAPACITY = 1000;
const MAX_NAME = 60;

/** The input of a new team as the API gives it. */
export interface TeamInput {
  name: string;
  memberIds: readonly string[];
  chatbotIds: readonly string[];
  assignment: string;
  capacity: number;
}

const nameKey = (name: string) => name.toLowerCase();

function assignment(v: string): Assignment {
  const a = v === "" ? "off" : v;
  if (!(ASSIGNMENTS as readonly string[]).includes(a))
    throw invalidArgument("assignment", `must be one of ${ASSIGNMENTS.join(", ")}`);
  return a as Assignment;
}

function capacity(v: number): number {
  if (!Number.isInteger(v) || v < 0 || v > MAX_CAPACITY)
    throw invalidArgument("capacity", `must be a whole number from 0 (no limit) to ${MAX_CAPACITY}`);
  return v;
}

/** Distinct uuids of a list field, at most MAX_TEAM_ITEMS. */
function ids(field: string, values: readonly string[]): string[] {
  if (values.length > MAX_TEAM_ITEMS) throw invalidArgument(field, `at most ${MAX_TEAM_ITEMS}`);
  return [...new Set(values.map((v) => requireUuid(field, v).toLowerCase()))];
}

function nameTaken(name: string): DomainError {
  return new DomainError("already_exists", `name: the account has a team "${name}" already`);
}

/**
 * The account's teams: admins make them (the gate admits only them to the writes), give them people and chatbots;
 * every change is in the audit log (team.created, team.updated, team.deleted).
 */
export class Teams {
  constructor(
    private readonly d: {
      teams: TeamRepository;
      accounts: Pick<AccountRepository, "byId">;
      members: Pick<MemberRepository, "listForAccount">;
      chatbots: Pick<ChatbotRepository, "listForAccount">;
      clock: Clock;
      transaction: Transact<TeamTx>;
      audit: AuditLog<TeamTx>;
    },
  ) {}

  list(caller: AccountCaller): Promise<TeamRecord[]> {
    return this.d.teams.list(caller.accountId, MAX_TEAMS);
  }

  /** The chatbots the caller does not see: none for admins; for an operator, those of teams they are not in. */
  hiddenChatbots(caller: Pick<AccountCaller, "accountId" | "memberId" | "role">): Promise<string[]> {
    return caller.role === "admin" ? Promise.resolve([]) : this.d.teams.hiddenFor(caller.accountId, caller.memberId);
  }

  async create(caller: AccountCaller, input: TeamInput): Promise<TeamRecord> {
    const name = requireText("name", input.name.trim(), MAX_NAME);
    const a = assignment(input.assignment);
    const cap = capacity(input.capacity);
    const members = await this.people(caller, ids("member_ids", input.memberIds));
    const chatbotIds = await this.chatbots(caller, ids("chatbot_ids", input.chatbotIds));
    const now = this.d.clock.now();
    const team = {
      teamId: newId(),
      accountId: caller.accountId,
      name,
      assignment: a,
      capacity: cap,
      createdAt: now,
      updatedAt: now,
    };
    const details = { name, members: members.length, chatbots: chatbotIds.length, assignment: a, capacity: cap };
    await this.d.audit.within(
      caller,
      "team.created",
      team.teamId,
      async (tx) => {
        const teams = await tx.teams.list(caller.accountId, MAX_TEAMS);
        if (teams.length >= MAX_TEAMS)
          throw new DomainError("resource_exhausted", `an account keeps at most ${MAX_TEAMS} teams`);
        givenElsewhere(teams, team.teamId, chatbotIds);
        if (!(await tx.teams.add(team, nameKey(name)))) throw nameTaken(name);
        await tx.teams.setMembers(caller.accountId, team.teamId, members, now);
        await tx.teams.setChatbots(caller.accountId, team.teamId, chatbotIds, now);
      },
      details,
    );
    return this.get(caller, team.teamId);
  }

  async update(
    caller: AccountCaller,
    input: { teamId: string; name: string | undefined; assignment: string | undefined; capacity: number | undefined },
  ): Promise<TeamRecord> {
    const id = requireUuid("team_id", input.teamId).toLowerCase();
    const name = input.name === undefined ? undefined : requireText("name", input.name.trim(), MAX_NAME);
    const a = input.assignment === undefined ? undefined : assignment(input.assignment);
    const cap = input.capacity === undefined ? undefined : capacity(input.capacity);
    const old = await this.get(caller, id);
    const next = {
      teamId: id,
      accountId: caller.accountId,
      name: name ?? old.name,
      assignment: a ?? old.assignment,
      capacity: cap ?? old.capacity,
      updatedAt: this.d.clock.now(),
    };
    const details: Record<string, string | number> = {};
    if (next.name !== old.name) details.name = next.name;
    if (next.assignment !== old.assignment) details.assignment = next.assignment;
    if (next.capacity !== old.capacity) details.capacity = next.capacity;
    const r = await this.d.audit.within(
      caller,
      "team.updated",
      id,
      (tx) => tx.teams.update(next, nameKey(next.name)),
      details,
    );
    if (r === "missing") throw notFound("team");
    if (r === "taken") throw nameTaken(next.name);
    return this.get(caller, id);
  }

  async setMembers(caller: AccountCaller, teamId: string, memberIds: readonly string[]): Promise<TeamRecord> {
    const id = requireUuid("team_id", teamId).toLowerCase();
    // Another account's team is not found before anything of the request is judged.
    await this.get(caller, id);
    const members = await this.people(caller, ids("member_ids", memberIds));
    await this.d.audit.within(
      caller,
      "team.updated",
      id,
      (tx) => tx.teams.setMembers(caller.accountId, id, members, this.d.clock.now()),
      { members: members.map((m) => m.email).join(" ") },
    );
    return this.get(caller, id);
  }

  async setChatbots(caller: AccountCaller, teamId: string, chatbotIds: readonly string[]): Promise<TeamRecord> {
    const id = requireUuid("team_id", teamId).toLowerCase();
    await this.get(caller, id);
    const bots = await this.chatbots(caller, ids("chatbot_ids", chatbotIds));
    await this.d.audit.within(
      caller,
      "team.updated",
      id,
      async (tx) => {
        givenElsewhere(await tx.teams.list(caller.accountId, MAX_TEAMS), id, bots);
        await tx.teams.setChatbots(caller.accountId, id, bots, this.d.clock.now());
      },
      { chatbots: bots.join(" ") },
    );
    return this.get(caller, id);
  }

  async remove(caller: AccountCaller, teamId: string): Promise<void> {
    const id = requireUuid("team_id", teamId).toLowerCase();
    const team = await this.get(caller, id);
    const gone = await this.d.audit.within(caller, "team.deleted", id, (tx) => tx.teams.remove(caller.accountId, id), {
      name: team.name,
    });
    if (!gone) throw notFound("team");
  }

  /** The account's team; another account's answers as one that does not exist. */
  private async get(caller: AccountCaller, teamId: string): Promise<TeamRecord> {
    const t = (await this.d.teams.list(caller.accountId, MAX_TEAMS)).find((x) => x.teamId === teamId);
    if (!t) throw notFound("team");
    return t;
  }

  /** The account's people with these ids (the owner, joined members), each with the e-mail they sign in with. */
  private async people(caller: AccountCaller, memberIds: readonly string[]): Promise<TeamMember[]> {
    if (memberIds.length === 0) return [];
    const [account, members] = await Promise.all([
      this.d.accounts.byId(caller.accountId),
      this.d.members.listForAccount(caller.accountId),
    ]);
    const known = new Map<string, string>();
    if (account) known.set(account.accountId.toLowerCase(), account.email);
    for (const m of members) if (m.joinedAt !== null) known.set(m.memberId.toLowerCase(), m.email);
    return memberIds.map((id) => {
      const email = known.get(id);
      if (email === undefined)
        // An id of nobody (here) is not found, as any id of nothing is; the message names the field.
        throw new DomainError("not_found", `member_ids: ${id} is not a person of this account who has joined`);
      return { memberId: id, email };
    });
  }

  /** The ids, each one of the account's chatbots. */
  private async chatbots(caller: AccountCaller, chatbotIds: readonly string[]): Promise<string[]> {
    if (chatbotIds.length === 0) return [];
    const own = new Set((await this.d.chatbots.listForAccount(caller.accountId)).map((c) => c.chatbotId.toLowerCase()));
    for (const id of chatbotIds)
      if (!own.has(id)) throw new DomainError("not_found", `chatbot_ids: ${id} is not a chatbot of this account`);
    return chatbotIds.slice();
  }
}

/** Refuses chatbots another team of the account is given already (a chatbot is one team's at most). */
function givenElsewhere(teams: readonly TeamRecord[], teamId: string, chatbotIds: readonly string[]): void {
  for (const t of teams) {
    if (t.teamId === teamId) continue;
    const dup = t.chatbotIds.find((c) => chatbotIds.includes(c));
    if (dup) throw new DomainError("already_exists", `chatbot_ids: ${dup} is given to the team "${t.name}" already`);
  }
}
