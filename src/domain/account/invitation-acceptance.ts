import type { Clock } from "../clock.js";
import { DomainError } from "../errors.js";
import type { Transact } from "../unit.js";
import type { AccountRepository, InvitationRepository, MemberRecord, MemberRepository } from "./repository.js";

/** The repositories of an account's people: the accounts, their members and pending invitations. */
export interface TeamRepos {
  accounts: AccountRepository;
  members: MemberRepository;
  invitations: InvitationRepository;
}

/** What accepting a pending invitation needs: the accounts, members and invitations, and a unit of work. */
export type AcceptanceDeps = TeamRepos & {
  transaction: Transact<TeamRepos>;
  clock: Clock;
};

/** The answer to a code that is not (or no longer) a usable invitation. */
export const invitationInvalid = () =>
  new DomainError("unauthenticated", "the invitation is not valid: it was used already, or has expired", {
    reason: "InvitationInvalidError",
  });

/**
 * The invited e-mail signs in to another account already. Sign-in finds a person by e-mail alone, so a person
 * belongs to one account at most: told to the person accepting, the invitation is kept for later, nothing changes.
 */
const emailInUse = (email: string) =>
  new DomainError(
    "failed_precondition",
    `${email} already signs in to another account, and an e-mail belongs to one account at most: ask that ` +
      "account's admin to remove you (or ask to be invited with another e-mail), then open this invitation again " +
      "before it expires",
    { reason: "InvitationEmailInUseError" },
  );

/**
 * Another account invited the e-mail earlier, and its invitation is still pending. An admin is shown the code of
 * each invitation they make, so without this an admin could take any e-mail by accepting their own invitation, and
 * the person's real invitation (made earlier) would then be refused.
 */
const invitedEarlier = (email: string) =>
  new DomainError(
    "failed_precondition",
    `${email} was invited earlier by another account, and an e-mail belongs to one account at most: accept that ` +
      "invitation, or ask that account's admin to withdraw it, then open this invitation again before it expires",
    { reason: "InvitationEmailInUseError" },
  );

/**
 * Turns the pending invitation whose code hashes to `codeHash` into a member with `passwordHash`, in one unit of
 * work: the invitation is used up only if the person joins; undefined when no pending invitation has this code
 * (it may be a member's password-reset link).
 */
export async function acceptPending(
  d: AcceptanceDeps,
  codeHash: string,
  hashPassword: () => Promise<string>,
): Promise<MemberRecord | undefined> {
  const pending = await d.invitations.byCode(codeHash);
  if (!pending) return undefined;
  if (pending.expiresAt <= d.clock.now()) throw invitationInvalid();
  if (await d.invitations.earlierElsewhere(pending, d.clock.now())) throw invitedEarlier(pending.email);
  // Hashed outside the unit of work: scrypt's tens of milliseconds hold no lock.
  const passwordHash = await hashPassword();
  const now = d.clock.now();
  return d.transaction(async (tx) => {
    // Of two uses racing, only one finds it still there.
    if (!(await tx.invitations.take(codeHash, now))) throw invitationInvalid();
    if (await tx.accounts.byEmail(pending.email)) throw emailInUse(pending.email);
    const m: MemberRecord = {
      memberId: pending.invitationId,
      accountId: pending.accountId,
      email: pending.email,
      role: pending.role,
      passwordHash,
      invitationHash: null,
      invitationExpiresAt: null,
      createdAt: pending.createdAt,
      joinedAt: now,
    };
    // Thrown, the unit is undone: the invitation stays pending for when the e-mail is free.
    if (!(await tx.members.join(m))) throw emailInUse(pending.email);
    return m;
  });
}
