import type { InvitationRepository } from "../../domain/account/repository.js";
import { invitationValues, toInvitation } from "../invitation-rows.js";
import type { PgDb } from "./db.js";
import { all, changed, first } from "./query.js";

/** Each account's pending invitations in PostgreSQL; e-mails compare case-insensitively, as members' do. */
export function pgInvitations(db: PgDb): InvitationRepository {
  const one = (name: string, sql: string, values: unknown[]) => first(db, name, sql, values, toInvitation);
  return {
    insert: async (i) =>
      (await db.count(
        "invitation_insert",
        `INSERT INTO invitations (invitation_id, account_id, email, role, code_hash, expires_at, created_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT DO NOTHING`,
        [...invitationValues(i)],
      )) > 0,
    byId: (accountId, invitationId) =>
      one("invitation_by_id", "SELECT * FROM invitations WHERE account_id = $1 AND invitation_id = $2", [
        accountId,
        invitationId,
      ]),
    byEmail: (accountId, email) =>
      one(
        "invitation_by_email",
        `SELECT * FROM invitations WHERE account_id = $1 AND (lower(email) COLLATE "C") = lower($2)`,
        [accountId, email],
      ),
    byCode: (codeHash) => one("invitation_by_code", "SELECT * FROM invitations WHERE code_hash = $1", [codeHash]),
    listForAccount: (accountId) =>
      all(
        db,
        "invitation_list",
        `SELECT * FROM invitations WHERE account_id = $1 ORDER BY lower(email) COLLATE "C"`,
        [accountId],
        toInvitation,
      ),
    update: (i) =>
      changed(
        db,
        "invitation_update",
        `UPDATE invitations SET role = $1, code_hash = $2, expires_at = $3
           WHERE invitation_id = $4 AND account_id = $5`,
        [i.role, i.codeHash, i.expiresAt, i.invitationId, i.accountId],
      ),
    remove: (accountId, invitationId) =>
      changed(db, "invitation_remove", "DELETE FROM invitations WHERE account_id = $1 AND invitation_id = $2", [
        accountId,
        invitationId,
      ]),
    take: (codeHash, now) =>
      changed(db, "invitation_take", "DELETE FROM invitations WHERE code_hash = $1 AND expires_at > $2", [
        codeHash,
        now,
      ]),
    // Pending invitations are few (they end in a week): read without an index of their own.
    earlierElsewhere: async (i, now) =>
      (
        await db.rows(
          "invitation_earlier_elsewhere",
          `SELECT 1 FROM invitations WHERE (lower(email) COLLATE "C") = lower($1) AND account_id <> $2
             AND expires_at > $3 AND created_at < $4 LIMIT 1`,
          [i.email, i.accountId, now, i.createdAt],
        )
      ).length > 0,
  };
}
