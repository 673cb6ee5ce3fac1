import type { AuditLog, AuditTx } from "../audit/audit-log.js";
import type { AccountCaller, Role } from "../caller.js";
import type { Clock } from "../clock.js";
import { DomainError, invalidArgument, notFound, permissionDenied } from "../errors.js";
import { hashSecret, newId, newSecret, requireUuid, sameHash } from "../ids.js";
import { lineage, type SessionOf } from "../lineage.js";
import type { Transact } from "../unit.js";
import { requireEmail, requireText } from "../validate.js";
import { acceptPending, invitationInvalid, type TeamRepos } from "./invitation-acceptance.js";
import { hashPassword, verifyPassword } from "./password.js";
import type { AccountRecord, InvitationRecord, MemberRecord, MemberRepository } from "./repository.js";

/** Prefix of every invitation code, so a leaked one is recognisable. */
export const INVITATION_PREFIX = "inv_";
/** How long an invitation works: a week to pass it on and accept it. */
export const INVITATION_TTL_MS = 7 * 24 * 3600 * 1000;
/** Shortest password accepted. */
export const MIN_PASSWORD = 8;
/** Longest password accepted: scrypt hashes anything, but there is no reason to hash a megabyte. */
export const MAX_PASSWORD = 1024;

const ROLES: readonly Role[] = ["admin", "operator"];

/** E-mail order as the back ends list people: case-insensitive, then by code point. */
const compareEmails = (x: string, y: string): number => {
  const a = x.toLowerCase();
  const b = y.toLowerCase();
  return a < b ? -1 : a > b ? 1 : 0;
};

/** A person of the account as listed: the owner (the account's own e-mail) or a member. */
export interface MemberView {
  memberId: string;
  email: string;
  role: Role;
  status: "invited" | "active";
  owner: boolean;
  createdAt: number;
}

/** A new member and the one-time code that lets them set a password (the code is shown once, kept as a hash). */
export interface IssuedInvitation {
  member: MemberView;
  invitationCode: string;
  expiresAt: number;
}

/** Checks a new password's length, naming the field. */
export function requirePassword(field: string, password: string): string {
  if (password.length < MIN_PASSWORD) throw invalidArgument(field, `must be at least ${MIN_PASSWORD} characters`);
  if (password.length > MAX_PASSWORD) throw invalidArgument(field, `must be at most ${MAX_PASSWORD} characters`);
  return password;
}

function requireRole(field: string, role: string): Role {
  if (!ROLES.includes(role as Role)) throw invalidArgument(field, `must be one of: ${ROLES.join(", ")}`);
  return role as Role;
}

/** What a row of the team list is made of: the account's owner and pending invitations read as members too. */
type Listed = Pick<MemberRecord, "memberId" | "email" | "role" | "createdAt" | "joinedAt">;

/** A member the account's owner is not: invited until they join. */
const memberView = (m: Listed): MemberView => ({
  memberId: m.memberId,
  email: m.email,
  role: m.role,
  status: m.joinedAt === null ? "invited" : "active",
  owner: false,
  createdAt: m.createdAt,
});

/** A pending invitation reads as a member who has not joined yet, under the invitation's id. */
const invitedView = (i: InvitationRecord): MemberView =>
  memberView({ memberId: i.invitationId, email: i.email, role: i.role, createdAt: i.createdAt, joinedAt: null });

/** The account's owner: an admin from the start, and the only member marked so. */
const ownerView = (a: AccountRecord): MemberView => ({
  ...memberView({
    memberId: a.accountId,
    email: a.email,
    role: "admin",
    createdAt: a.createdAt,
    joinedAt: a.createdAt,
  }),
  owner: true,
});

/** The account's owner as the caller, when `email` is the account's own (any case); undefined for anyone else. */
export function ownerCaller(account: AccountRecord, email: string): AccountCaller | undefined {
  // The same text (the token's e-mail is the account's, as a rule) needs no case folding.
  if (account.email === email || account.email.toLowerCase() === email.toLowerCase())
    return {
      kind: "account",
      accountId: account.accountId,
      email: account.email,
      accountEmail: account.email,
      role: "admin",
      memberId: account.accountId,
    };
  return undefined;
}

/**
 * Who the holder of an ID token is now: the owner (the account's e-mail), or a member who has joined, with the
 * role they have now (a removed member, or one whose invitation is pending, is nobody).
 */
export async function resolvePerson(
  members: Pick<MemberRepository, "byEmail">,
  account: AccountRecord,
  email: string,
): Promise<AccountCaller | undefined> {
  const owner = ownerCaller(account, email);
  if (owner) return owner;
  const m = await members.byEmail(email);
  if (!m || m.accountId !== account.accountId || m.joinedAt === null) return undefined;
  return {
    kind: "account",
    accountId: account.accountId,
    email: m.email,
    accountEmail: account.email,
    role: m.role,
    memberId: m.memberId,
  };
}

/** The people of an account: invitations, roles, passwords, and who a signed-in person is. */
export class TeamService {
  constructor(
    private readonly d: TeamRepos & {
      transaction: Transact<TeamRepos & AuditTx>;
      clock: Clock;
      audit: AuditLog<TeamRepos & AuditTx>;
      /** Revokes every token descending from these lineage ids (see lineage.ts), but the session `keep`. */
      revoke?: (ids: readonly string[], keep?: SessionOf) => Promise<void>;
    },
  ) {}

  /**
   * Invites a person with a role. Only this account is consulted: whether the e-mail is known elsewhere (another
   * account's owner, member or invitation) changes nothing in the answer; it is decided at acceptance.
   */
  async invite(caller: AccountCaller, email: string, role: string): Promise<IssuedInvitation> {
    const e = requireEmail("email", email.trim());
    const r = requireRole("role", role);
    const [account, member, pending] = await Promise.all([
      this.d.accounts.byId(caller.accountId),
      this.d.members.byEmail(e),
      this.d.invitations.byEmail(caller.accountId, e),
    ]);
    if (account?.email.toLowerCase() === e.toLowerCase())
      throw new DomainError("already_exists", `${e} is this account's owner`);
    if (member?.accountId === caller.accountId)
      throw new DomainError("already_exists", `${e} is already a member of this account`);
    const invited = (id: string) =>
      new DomainError(
        "already_exists",
        `${e} is already invited to this account: issue a new link with POST /v1/account/members/${id}/password_reset`,
      );
    if (pending) throw invited(pending.invitationId);
    const invitationCode = newSecret(INVITATION_PREFIX);
    const now = this.d.clock.now();
    const i: InvitationRecord = {
      invitationId: newId(),
      accountId: caller.accountId,
      email: e,
      role: r,
      codeHash: hashSecret(invitationCode),
      expiresAt: now + INVITATION_TTL_MS,
      createdAt: now,
    };
    const insert = async (tx: TeamRepos) => {
      // Of two invitations of one e-mail at once, the second finds the first: undone, answered as above.
      if (!(await tx.invitations.insert(i)))
        throw invited((await tx.invitations.byEmail(caller.accountId, e))?.invitationId ?? "{member_id}");
    };
    await this.d.audit.within(caller, "member.invited", i.invitationId, insert, { role: r });
    return { member: invitedView(i), invitationCode, expiresAt: i.expiresAt };
  }

  /** The owner first, then the members and the pending invitations by e-mail. */
  async list(caller: AccountCaller): Promise<MemberView[]> {
    const [account, members, pending] = await Promise.all([
      this.d.accounts.byId(caller.accountId),
      this.d.members.listForAccount(caller.accountId),
      this.d.invitations.listForAccount(caller.accountId),
    ]);
    const people = [...members.map(memberView), ...pending.map(invitedView)];
    people.sort((x, y) => compareEmails(x.email, y.email));
    return [...(account ? [ownerView(account)] : []), ...people];
  }

  /** Changes a member's role; the owner's cannot change, and nobody changes their own. */
  async setRole(caller: AccountCaller, memberId: string, role: string): Promise<MemberView> {
    const m = await this.member(caller, memberId);
    if (!("memberId" in m)) {
      const next = { ...m, role: requireRole("role", role) };
      const audit = { from: m.role, to: next.role };
      const change = (tx: TeamRepos) => tx.invitations.update(next);
      if (!(await this.d.audit.within(caller, "member.updated", m.invitationId, change, audit)))
        throw notFound(`member ${memberId}`);
      return invitedView(next);
    }
    if (m.memberId === caller.memberId) throw permissionDenied("you cannot change your own role");
    const next = { ...m, role: requireRole("role", role) };
    const audit = { from: m.role, to: next.role };
    if (!(await this.d.audit.within(caller, "member.updated", m.memberId, (tx) => tx.members.update(next), audit)))
      throw notFound(`member ${memberId}`);
    return memberView(next);
  }

  /** Removes a member; the owner cannot be removed, and nobody removes themself. */
  async remove(caller: AccountCaller, memberId: string): Promise<void> {
    const m = await this.member(caller, memberId);
    if (!("memberId" in m)) {
      // A pending invitation withdrawn: its code stops working; it held nothing else.
      const gone = (tx: TeamRepos) => tx.invitations.remove(caller.accountId, m.invitationId);
      if (!(await this.d.audit.within(caller, "member.removed", m.invitationId, gone)))
        throw notFound(`member ${memberId}`);
      return;
    }
    if (m.memberId === caller.memberId) throw permissionDenied("you cannot remove yourself");
    const gone = (tx: TeamRepos) => tx.members.remove(caller.accountId, m.memberId);
    if (!(await this.d.audit.within(caller, "member.removed", m.memberId, gone))) throw notFound(`member ${memberId}`);
    // Everything the member held ends now, and stays ended should the e-mail be invited again.
    await this.d.revoke?.([lineage.person(caller.accountId, m.email)]);
  }

  /**
   * A one-time link for a member to set a new password, accepted like an invitation (same code form, same week).
   * The current password keeps working until the link is used: issuing one locks nobody out.
   */
  async issuePasswordReset(caller: AccountCaller, memberId: string): Promise<IssuedInvitation> {
    const m = await this.member(caller, memberId);
    if (!("memberId" in m)) {
      // A pending invitation gets a new code and a new week; the old code stops.
      const code = newSecret(INVITATION_PREFIX);
      const next = { ...m, codeHash: hashSecret(code), expiresAt: this.d.clock.now() + INVITATION_TTL_MS };
      if (!(await this.d.invitations.update(next))) throw notFound(`member ${memberId}`);
      return { member: invitedView(next), invitationCode: code, expiresAt: next.expiresAt };
    }
    if (m.memberId === caller.memberId)
      throw permissionDenied("change your own password with your current one (POST /v1/account/password)");
    const invitationCode = newSecret(INVITATION_PREFIX);
    const next = {
      ...m,
      invitationHash: hashSecret(invitationCode),
      invitationExpiresAt: this.d.clock.now() + INVITATION_TTL_MS,
    };
    if (!(await this.d.members.update(next))) throw notFound(`member ${memberId}`);
    return { member: memberView(next), invitationCode, expiresAt: next.invitationExpiresAt };
  }

  /** Sets the invited person's password with the one-time code: it works once, until it expires. */
  async accept(invitationCode: string, password: string): Promise<MemberView> {
    requireText("invitation_code", invitationCode);
    requirePassword("password", password);
    const hash = hashSecret(invitationCode);
    const invalid = invitationInvalid();
    if (invitationCode.length > 512) throw invalid;
    const joined = await acceptPending(this.d, hash, () => hashPassword(password));
    if (joined) {
      await this.accepted(joined.accountId, joined.email, joined.memberId, joined.role, "invitation");
      return memberView(joined);
    }
    // Else a member's password-reset link (kept on the member).
    const m = await this.d.members.byInvitation(hash);
    const now = this.d.clock.now();
    if (!m?.invitationHash || !sameHash(m.invitationHash, hash) || (m.invitationExpiresAt ?? 0) <= now) throw invalid;
    // One statement that uses the invitation up: of two uses racing, only one finds it still there.
    if (!(await this.d.members.acceptInvitation(hash, await hashPassword(password), now))) throw invalid;
    // A reset link used: every ID token of the old password stops.
    if (m.passwordHash) await this.d.revoke?.([lineage.password(m.accountId, m.email)]);
    await this.accepted(m.accountId, m.email, m.memberId, m.role, m.passwordHash ? "password_reset" : "invitation");
    return memberView({ ...m, joinedAt: now });
  }

  /** The audit log's line for a used invitation or reset link: by the person who used it. */
  private accepted(accountId: string, email: string, memberId: string, role: string, link: string) {
    return this.d.audit.note({ kind: "service", accountId, actor: email }, "invitation.accepted", memberId, {
      role,
      link,
    });
  }

  /**
   * Changes the caller's own password (the owner's is the account's), and revokes every ID token minted with a
   * password before, but the caller's own `session` (the console's, or the bearer token that made the change).
   */
  async changePassword(caller: AccountCaller, current: string, next: string, session?: SessionOf): Promise<void> {
    requireText("current_password", current);
    requirePassword("new_password", next);
    const account = await this.d.accounts.byId(caller.accountId);
    if (!account) throw notFound("account");
    const isOwner = caller.memberId === account.accountId;
    const m = isOwner ? undefined : await this.d.members.byId(caller.accountId, caller.memberId);
    if (!isOwner && !m) throw notFound(`member ${caller.memberId}`);
    const stored = isOwner ? account.passwordHash : m!.passwordHash;
    if (!stored || !(current.length <= MAX_PASSWORD && (await verifyPassword(current, stored))))
      throw invalidArgument("current_password", "is not your current password");
    const hash = await hashPassword(next);
    if (isOwner) await this.d.accounts.setPassword(account.accountId, hash);
    else await this.d.members.update({ ...m!, passwordHash: hash });
    await this.d.revoke?.([lineage.password(caller.accountId, caller.email)], session);
  }

  /**
   * True when the e-mail is the account's own or one of its members' who has joined. A pending invitee is not yet:
   * the e-mail may belong to someone else entirely (another account's member), who never chose to join.
   */
  async isPersonOf(accountId: string, email: string): Promise<boolean> {
    const account = await this.d.accounts.byId(accountId);
    if (account && account.email.toLowerCase() === email.toLowerCase()) return true;
    const member = await this.d.members.byEmail(email);
    return member?.accountId === accountId && member.joinedAt !== null;
  }

  /** The account's member, or its pending invitation (listed as an invited member, under the same kind of id). */
  private async member(caller: AccountCaller, memberId: string): Promise<MemberRecord | InvitationRecord> {
    if (memberId === caller.accountId) throw permissionDenied("the account's owner cannot be changed or removed");
    const id = requireUuid("member_id", memberId);
    const m =
      (await this.d.members.byId(caller.accountId, id)) ?? (await this.d.invitations.byId(caller.accountId, id));
    if (!m) throw notFound(`member ${memberId}`);
    return m;
  }
}
