import type { AccountCaller, CallOrigin } from "../caller.js";
import type { Clock } from "../clock.js";
import { invalidArgument } from "../errors.js";
import { newId } from "../ids.js";
import type { Transact } from "../unit.js";
import { AUDIT_KINDS, type AuditEventRecord, type AuditKind, type AuditRepository } from "./repository.js";

/** What the audit log writes to: its own repository. */
export interface AuditTx {
  audit: AuditRepository;
}

/** Who an audited action is by: a caller of the account API, or the service itself (the command line, schedules). */
export type AuditActor = AccountCaller | { kind: "service"; accountId: string; actor?: string; origin?: CallOrigin };

/** Default and largest page of the audit log. */
export const AUDIT_PAGE_DEFAULT = 50;
export const AUDIT_PAGE_MAX = 500;
/** Longest stored User-Agent and detail value: enough to recognise, never a place to smuggle bulk data. */
const MAX_FIELD = 256;

/** One page of the audit log and where the next (older) one starts. */
export interface AuditPage {
  events: AuditEventRecord[];
  nextPageToken: string;
}

/** A page request as the API gives it: kinds, ISO instants, a limit and the previous page's token. */
export interface AuditListInput {
  kinds: readonly string[];
  since: string;
  until: string;
  limit: number | undefined;
  pageToken: string;
}

const clip = (s: string) => (s.length > MAX_FIELD ? s.slice(0, MAX_FIELD) : s);

/**
 * The account's audit log: every administrative action records one event in the unit of work that does it
 * (`tx`), so an action and its record land together or not at all. Callers put ids, roles and counts in
 * `details`, never a secret (keys, codes, passwords, tokens are never passed here).
 */
export class AuditLog<R extends AuditTx = AuditTx> {
  constructor(
    private readonly d: {
      clock: Clock;
      store: AuditTx;
      /** Units of work over what the audited actions write (`within`), the audit log included. */
      transaction: Transact<R>;
      /** How long events are kept, in days (AIAGENT_AUDIT_RETENTION_DAYS). */
      retentionDays: number;
    },
  ) {}

  /** Records one action in the open unit of work `tx` (or the store, for an action that is one write). */
  async record(
    tx: AuditTx,
    who: AuditActor,
    kind: AuditKind,
    target = "",
    details: Record<string, string | number> = {},
  ): Promise<void> {
    const origin = who.origin;
    await tx.audit.insert({
      auditEventId: newId(),
      accountId: who.accountId,
      kind,
      actor: who.kind === "account" ? who.email : (who.actor ?? "service"),
      target,
      details: Object.fromEntries(Object.entries(details).map(([k, v]) => [k, clip(String(v))])),
      address: clip(origin?.address ?? ""),
      userAgent: clip(origin?.userAgent ?? ""),
      createdAt: this.d.clock.now(),
    });
  }

  /** Records an action that writes nothing else (a sign-in) in a unit of its own. */
  note(who: AuditActor, kind: AuditKind, target = "", details: Record<string, string | number> = {}): Promise<void> {
    return this.record(this.d.store, who, kind, target, details);
  }

  /** Runs an action's writes and records it, in one unit of work: exactly one event per action that happened. */
  within<T>(
    who: AuditActor,
    kind: AuditKind,
    target: string,
    write: (tx: R) => Promise<T>,
    details: Record<string, string | number> = {},
  ): Promise<T> {
    return this.d.transaction(async (tx) => {
      const r = await write(tx);
      await this.record(tx, who, kind, target, details);
      return r;
    });
  }

  /** A page of the caller's account's log, newest first. */
  async list(caller: AccountCaller, q: AuditListInput): Promise<AuditPage> {
    if (q.kinds.length > AUDIT_KINDS.length) throw invalidArgument("kinds", `at most ${AUDIT_KINDS.length} kinds`);
    if (q.pageToken.length > 60) throw invalidArgument("page_token", "is not a token this list gave");
    for (const k of q.kinds)
      if (!(AUDIT_KINDS as readonly string[]).includes(k))
        throw invalidArgument(
          "kinds",
          `unknown kind ${JSON.stringify(k.slice(0, 40))}: one of ${AUDIT_KINDS.join(", ")}`,
        );
    const limit = q.limit ?? AUDIT_PAGE_DEFAULT;
    if (!Number.isInteger(limit) || limit < 1 || limit > AUDIT_PAGE_MAX)
      throw invalidArgument("limit", `must be from 1 to ${AUDIT_PAGE_MAX}`);
    const events = await this.d.store.audit.list({
      accountId: caller.accountId,
      kinds: q.kinds,
      since: instant("since", q.since),
      until: instant("until", q.until),
      before: q.pageToken ? parseToken(q.pageToken) : undefined,
      limit: limit + 1,
    });
    const more = events.length > limit;
    const page = more ? events.slice(0, limit) : events;
    const last = page[page.length - 1];
    return { events: page, nextPageToken: more && last ? `${last.createdAt}.${last.auditEventId}` : "" };
  }

  /** Drops events older than the retention period, a batch at a time; answers how many went. */
  async prune(batch = 1000): Promise<number> {
    const before = this.d.clock.now() - this.d.retentionDays * 86_400_000;
    let total = 0;
    for (;;) {
      const n = await this.d.store.audit.prune(before, batch);
      total += n;
      if (n < batch) return total;
    }
  }
}

function instant(field: string, iso: string): number | undefined {
  if (iso === "") return undefined;
  const t = Date.parse(iso);
  if (iso.length > 40 || Number.isNaN(t)) throw invalidArgument(field, "must be an ISO 8601 instant");
  return t;
}

const TOKEN = /^(\d{1,16})\.([0-9a-f-]{36})$/;

function parseToken(token: string): { createdAt: number; auditEventId: string } {
  const m = TOKEN.exec(token);
  if (!m) throw invalidArgument("page_token", "is not a token this list gave");
  return { createdAt: Number(m[1]), auditEventId: m[2]! };
}
