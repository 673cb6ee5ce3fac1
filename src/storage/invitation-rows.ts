import type { InvitationRecord, MemberRecord } from "../domain/account/repository.js";
import type { Role } from "../domain/caller.js";

/** A row of `invitations`, the same on both back ends. */
export interface InvitationRow {
  invitation_id: string;
  account_id: string;
  email: string;
  role: string;
  code_hash: string;
  expires_at: number | string;
  created_at: number | string;
}

/** The row as the domain's record (PostgreSQL may hand a bigint over as a string). */
export const toInvitation = (r: InvitationRow): InvitationRecord => ({
  invitationId: r.invitation_id,
  accountId: r.account_id,
  email: r.email,
  role: r.role as Role,
  codeHash: r.code_hash,
  expiresAt: Number(r.expires_at),
  createdAt: Number(r.created_at),
});

/** The values of one invitation's insert, in the column order both back ends write them. */
export const invitationValues = (i: InvitationRecord) =>
  [i.invitationId, i.accountId, i.email, i.role, i.codeHash, i.expiresAt, i.createdAt] as const;

/** The values of one member's insert (or join), in the column order both back ends write them. */
export const memberValues = (m: MemberRecord) =>
  [
    m.memberId,
    m.accountId,
    m.email,
    m.role,
    m.passwordHash,
    m.invitationHash,
    m.invitationExpiresAt,
    m.createdAt,
    m.joinedAt,
  ] as const;
