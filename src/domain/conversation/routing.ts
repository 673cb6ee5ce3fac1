import type { Assignment, TeamRecord, TeamRepository } from "../account/teams.js";
import type { AuditLog } from "../audit/audit-log.js";
import type { AccountCaller } from "../caller.js";
import type { Clock } from "../clock.js";
import type { EventLog } from "../log/event-log.js";
import type { Transact } from "../unit.js";
import { type NameOf, nameFor, recordActivity } from "./activity.js";
import { type ConversationTx, summarize } from "./conversation-core.js";
import type { ConversationRecord } from "./repository.js";
import { AI_AGENT } from "./rules.js";

/** How long a console stream's presence lasts without a beat (it beats every PRESENCE_BEAT_MS). */
export const PRESENCE_TTL_MS = 60_000;
export const PRESENCE_BEAT_MS = 20_000;
/** Waiting conversations one pass of an account assigns at most. */
const DRAIN_BATCH = 50;

/** Who is in the console now, and who is away: what auto-assignment asks. */
export interface PresenceRepository {
  /** The person has a live console stream until `until` (a later beat moves it on). */
  beat(accountId: string, email: string, until: number): Promise<void>;
  /** The person's stream on this instance ended: they are offline unless another stream beats again. */
  leave(accountId: string, email: string): Promise<void>;
  /** The person set themselves away (no new work) or available. */
  setAway(accountId: string, email: string, away: boolean): Promise<void>;
  /** Whether the person set themselves away. */
  isAway(accountId: string, email: string): Promise<boolean>;
  /** Of these e-mails (lower case), those online at `now` and not away. */
  available(accountId: string, emails: readonly string[], now: number): Promise<string[]>;
}

/** What auto-assignment reads and writes in its unit of work. */
export interface RoutingRepository {
  /** Locks the team's routing (PostgreSQL: its row, FOR UPDATE) and answers who it assigned last ("" when none). */
  lockTeam(teamId: string): Promise<string | undefined>;
  /** The e-mails of the team's members who are still the account's people. */
  memberEmails(teamId: string): Promise<string[]>;
  /** Remembers who the team assigned last (round robin's turn). */
  setLastAssigned(teamId: string, email: string): Promise<void>;
  /** Open conversations (stored live, active since `liveSince`) each e-mail (lower case) holds; absent: none. */
  loads(accountId: string, emails: readonly string[], liveSince: number): Promise<Map<string, number>>;
  /** Handed-over conversations of these chatbots no person holds, still live, the longest waiting first. */
  waiting(accountId: string, chatbotIds: readonly string[], liveSince: number, limit: number): Promise<string[]>;
}

/** The unit of work of an assignment. */
export interface RoutingTx extends ConversationTx {
  routing: RoutingRepository;
}

/** The person auto-assignment picks: by turn after `last`, or by least load, under the capacity; undefined: none. */
export function pick(
  how: Exclude<Assignment, "off">,
  candidates: readonly string[],
  loads: ReadonlyMap<string, number>,
  capacity: number,
  last: string,
): string | undefined {
  const under = candidates.filter((e) => capacity === 0 || (loads.get(e) ?? 0) < capacity);
  if (under.length === 0) return undefined;
  if (how === "balanced") {
    // The fewest open conversations; of equals, the one whose turn comes first after the last assigned.
    const least = Math.min(...under.map((e) => loads.get(e) ?? 0));
    return turnAfter(
      under.filter((e) => (loads.get(e) ?? 0) === least),
      last,
    );
  }
  return turnAfter(under, last);
}

/** The first of `sorted` after `last` in e-mail order, wrapping round. */
function turnAfter(sorted: readonly string[], last: string): string | undefined {
  return sorted.find((e) => e > last) ?? sorted[0];
}

/**
 * Auto-assignment per team (issue 45), as Chatwoot's: a conversation handed over to the team by the AI agent is
 * given to one of its members who is online (a live console stream) and not away, in turn (round robin) or to the
 * least loaded (balanced), under the team's capacity of open conversations per member. When nobody can take it, it
 * waits unassigned and is assigned when someone comes online or drops below capacity (drain). Each assignment is a
 * timeline line, a conversation.assigned event and an audit entry, in one unit of work that holds the team's lock,
 * so two instances never assign one conversation twice nor overfill a member.
 */
export class Routing {
  constructor(
    private readonly d: {
      teams: Pick<TeamRepository, "list">;
      presence: PresenceRepository;
      /** Read outside units of work: who is in a team, what waits (a pass then decides under the team's lock). */
      routing: Pick<RoutingRepository, "memberEmails" | "waiting">;
      conversations: { byId(id: string): Promise<ConversationRecord | undefined> };
      transaction: Transact<RoutingTx>;
      log: EventLog;
      clock: Clock;
      idleCloseSeconds: number;
      auditLog?: AuditLog | undefined;
      nameOf?: NameOf | undefined;
      /** Where a failure of a background pass is told (it never fails the change that started it). */
      onError?: (e: unknown) => void;
    },
  ) {}

  /** Routes a conversation just handed over; undefined when it waits (nobody available, or no team routes it). */
  async route(accountId: string, conversationId: string): Promise<string | undefined> {
    const conv = await this.d.conversations.byId(conversationId);
    if (!conv || conv.accountId !== accountId) return undefined;
    const team = (await this.d.teams.list(accountId, 100)).find((t) => t.chatbotIds.includes(conv.chatbotId));
    if (!team || team.assignment === "off") return undefined;
    return this.assign(team, conversationId);
  }

  /** Assigns the account's waiting conversations while someone can take them (someone came online, or freed). */
  async drain(accountId: string): Promise<number> {
    let assigned = 0;
    for (const team of await this.d.teams.list(accountId, 100)) {
      if (team.assignment === "off" || team.chatbotIds.length === 0) continue;
      const waiting = await this.waitingFor(team);
      for (const id of waiting) {
        if ((await this.assign(team, id)) === undefined) break;
        assigned++;
      }
    }
    return assigned;
  }

  /** Runs a pass in the background: its failure is told, never thrown into the caller's change. */
  soon(fn: () => Promise<unknown>): void {
    fn().catch((e) => this.d.onError?.(e));
  }

  /** The person's console stream is open: online until the returned function is called (it beats meanwhile). */
  online(caller: AccountCaller): () => void {
    const email = caller.email.toLowerCase();
    const beat = () => this.d.presence.beat(caller.accountId, email, this.d.clock.now() + PRESENCE_TTL_MS);
    this.soon(async () => {
      await beat();
      await this.drain(caller.accountId);
    });
    const timer = setInterval(
      () =>
        this.soon(async () => {
          await beat();
          await this.drain(caller.accountId);
        }),
      PRESENCE_BEAT_MS,
    );
    timer.unref?.();
    let done = false;
    return () => {
      if (done) return;
      done = true;
      clearInterval(timer);
      this.soon(() => this.d.presence.leave(caller.accountId, email));
    };
  }

  /** Sets the caller away (no new work) or available (then waiting conversations may come to them). */
  async setAway(caller: AccountCaller, away: boolean): Promise<boolean> {
    await this.d.presence.setAway(caller.accountId, caller.email.toLowerCase(), away);
    if (!away) this.soon(() => this.drain(caller.accountId));
    return away;
  }

  isAway(caller: AccountCaller): Promise<boolean> {
    return this.d.presence.isAway(caller.accountId, caller.email.toLowerCase());
  }

  private liveSince(): number {
    return this.d.clock.now() - this.d.idleCloseSeconds * 1000;
  }

  private waitingFor(team: TeamRecord): Promise<string[]> {
    return this.d.routing.waiting(team.accountId, team.chatbotIds, this.liveSince(), DRAIN_BATCH);
  }

  /** One assignment under the team's lock: the member picked, or undefined when nobody can take it. */
  private async assign(team: TeamRecord, conversationId: string): Promise<string | undefined> {
    if (team.assignment === "off") return undefined;
    const how = team.assignment;
    const members = await this.emailsOf(team);
    if (members.length === 0) return undefined;
    const available = await this.d.presence.available(team.accountId, members, this.d.clock.now());
    if (available.length === 0) return undefined;
    return this.d.transaction(
      async (tx) => {
        const last = await tx.routing.lockTeam(team.teamId);
        if (last === undefined) return undefined;
        const conv = await tx.conversations.byId(conversationId);
        // Taken meanwhile (by a person, or by another instance's pass): nothing to do.
        if (!conv || conv.assignedTo !== AI_AGENT || conv.status !== "live") return undefined;
        const loads = await tx.routing.loads(team.accountId, available, this.liveSince());
        const to = pick(how, [...available].sort(), loads, team.capacity, last);
        if (to === undefined) return undefined;
        const name = await nameFor(this.d.nameOf, team.accountId, to);
        await tx.conversations.assign(conversationId, to, name);
        await tx.routing.setLastAssigned(team.teamId, to);
        const after = (await tx.conversations.byId(conversationId))!;
        await this.d.log.record(tx, team.accountId, [
          { type: "conversation.assigned", data: { conversationId, conversation: summarize(after, this.liveSince()) } },
        ]);
        await recordActivity(tx, this.d.log, {
          accountId: team.accountId,
          conversationId,
          kind: "assigned",
          actorEmail: "",
          actorName: `Auto-assignment (${team.name})`,
          fromEmail: AI_AGENT,
          fromName: "AI agent",
          toEmail: to,
          toName: name,
          detail: how === "balanced" ? "balanced by open conversations" : "round robin",
          createdAt: this.d.clock.now(),
        });
        await this.d.auditLog?.record(
          tx,
          { kind: "service", accountId: team.accountId, actor: "auto-assignment" },
          "conversation.assigned",
          conversationId,
          { from: AI_AGENT, to, team: team.teamId },
        );
        return to;
      },
      { rowLocks: true },
    );
  }

  /** The team's members' e-mails, lower case (the stored e-mail of each member id). */
  private async emailsOf(team: TeamRecord): Promise<string[]> {
    return (await this.d.routing.memberEmails(team.teamId)).map((e) => e.toLowerCase());
  }
}
