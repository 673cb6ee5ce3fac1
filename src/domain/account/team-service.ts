import type { AuditLog } from "../audit/audit-log.js";
import type { AccountCaller, Role } from "../caller.js";
import type { Clock } from "../clock.js";
import { DomainError, invalidArgument, notFound, permissionDenied } from "../errors.js";
import { hashSecret, newId, newSecret, requireUuid, sameHash } from "../ids.js";
import type { Repositories } from "../store.js";
import type { IdClaims } from "../token/jwt-strategy.js";
import { lineage } from "../token/lineage.js";
import { requireEmail, requireText } from "../validate.js";
import { hashPassword, verifyPassword } from "./password.js";
import type { AccountRecord, MemberRecord, MemberRepository } from "./repository.js";

/** Prefix of every invitation code, so a leaked one is recognisable. */
export const INVITATION_PREFIX = "inv_";
/** How long an invitation works: a week to pass it on and accept it. */
export const INVITATION_TTL_MS = 7 * 24 * 3600 * 1000;
/** Shortest password accepted. */
export const MIN_PASSWORD = 8;
/** Longest password accepted: scrypt hashes anything, but there is no reason to hash a megabyte. */
export const MAX_PASSWORD = 1024;

const ROLES: readonly Role[] = ["admin", "operator"];

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

type TeamRepos = Pick<Repositories, "accounts" | "members">;

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

function memberView(m: MemberRecord): MemberView {
  return {
    memberId: m.memberId,
    email: m.email,
    role: m.role,
    status: m.joinedAt === null ? "invited" : "active",
    owner: false,
    createdAt: m.createdAt,
  };
}

function ownerView(a: AccountRecord): MemberView {
  return {
    memberId: a.accountId,
    email: a.email,
    role: "admin",
    status: "active",
    owner: true,
    createdAt: a.createdAt,
  };
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
  if (account.email.toLowerCase() === email.toLowerCase())
    return {
      kind: "account",
      accountId: account.accountId,
      email: account.email,
      accountEmail: account.email,
      role: "admin",
      memberId: account.accountId,
    };
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
      clock: Clock;
      audit: AuditLog;
      /** Revokes every token descending from these lineage ids (see token/lineage.ts), but the session `keep`. */
      revoke?: (ids: readonly string[], keep?: IdClaims) => Promise<void>;
    },
  ) {}

  /** Adds a person with a role; their e-mail must not be an account's or any account's member already. */
  async invite(caller: AccountCaller, email: string, role: string): Promise<IssuedInvitation> {
    const e = requireEmail("email", email.trim());
    const r = requireRole("role", role);
    if ((await this.d.accounts.byEmail(e)) || (await this.d.members.byEmail(e)))
      throw new DomainError("already_exists", `${e} is already a member of an account`);
    const invitationCode = newSecret(INVITATION_PREFIX);
    const now = this.d.clock.now();
    const m: MemberRecord = {
      memberId: newId(),
      accountId: caller.accountId,
      email: e,
      role: r,
      passwordHash: null,
      invitationHash: hashSecret(invitationCode),
      invitationExpiresAt: now + INVITATION_TTL_MS,
      createdAt: now,
      joinedAt: null,
    };
    await this.d.audit.within(caller, "member.invited", m.memberId, (tx) => tx.members.insert(m), { role: r });
    return { member: memberView(m), invitationCode, expiresAt: m.invitationExpiresAt! };
  }

  /** The owner first, then the members by e-mail. */
  async list(caller: AccountCaller): Promise<MemberView[]> {
    const account = await this.d.accounts.byId(caller.accountId);
    const members = await this.d.members.listForAccount(caller.accountId);
    return [...(account ? [ownerView(account)] : []), ...members.map(memberView)];
  }

  /** Changes a member's role; the owner's cannot change, and nobody changes their own. */
  async setRole(caller: AccountCaller, memberId: string, role: string): Promise<MemberView> {
    const m = await this.member(caller, memberId);
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
    const m = invitationCode.length <= 512 ? await this.d.members.byInvitation(hash) : undefined;
    const now = this.d.clock.now();
    const invalid = new DomainError(
      "unauthenticated",
      "the invitation is not valid: it was used already, or has expired",
      { reason: "InvitationInvalidError" },
    );
    if (!m?.invitationHash || !sameHash(m.invitationHash, hash) || (m.invitationExpiresAt ?? 0) <= now) throw invalid;
    // One statement that uses the invitation up: of two uses racing, only one finds it still there.
    if (!(await this.d.members.acceptInvitation(hash, await hashPassword(password), now))) throw invalid;
    // A reset link used: every ID token of the old password stops.
    if (m.passwordHash) await this.d.revoke?.([lineage.password(m.accountId, m.email)]);
    return memberView({ ...m, joinedAt: now });
  }

  /**
   * Changes the caller's own password (the owner's is the account's), and revokes every ID token minted with a
   * password before, but the caller's own `session` (the console's, or the bearer token that made the change).
   */
  async changePassword(caller: AccountCaller, current: string, next: string, session?: IdClaims): Promise<void> {
    requireText("current_password", current);
    requirePassword("new_password", next);
    const account = await this.d.accounts.byId(caller.accountId);
    if (!account) throw notFound("account");
    const isOwner = caller.memberId === account.accountId;
    const m = isOwner ? undefined : await this.member(caller, caller.memberId);
    const stored = isOwner ? account.passwordHash : m!.passwordHash;
    if (!stored || !(current.length <= MAX_PASSWORD && (await verifyPassword(current, stored))))
      throw invalidArgument("current_password", "is not your current password");
    const hash = await hashPassword(next);
    if (isOwner) await this.d.accounts.setPassword(account.accountId, hash);
    else await this.d.members.update({ ...m!, passwordHash: hash });
    await this.d.revoke?.([lineage.password(caller.accountId, caller.email)], session);
  }

  /** True when the e-mail is the account's own or one of its members' (invited or joined). */
  async isPersonOf(accountId: string, email: string): Promise<boolean> {
    const account = await this.d.accounts.byId(accountId);
    if (account && account.email.toLowerCase() === email.toLowerCase()) return true;
    return (await this.d.members.byEmail(email))?.accountId === accountId;
  }

  private async member(caller: AccountCaller, memberId: string): Promise<MemberRecord> {
    if (memberId === caller.accountId) throw permissionDenied("the account's owner cannot be changed or removed");
    const m = await this.d.members.byId(caller.accountId, requireUuid("member_id", memberId));
    if (!m) throw notFound(`member ${memberId}`);
    return m;
  }
}
