import type { InvitationRepository } from "../../domain/account/repository.js";
import { type InvitationRow, invitationValues, toInvitation } from "../invitation-rows.js";
import type { PgDb } from "./db.js";

/** Each account's pending invitations in PostgreSQL; e-mails compare case-insensitively, as members' do. */
export function pgInvitations(db: PgDb): InvitationRepository {
  const first = async (name: string, sql: string, values: unknown[]) =>
    (await db.rows<InvitationRow>(name, sql, values)).map(toInvitation)[0];
  return {
    insert: async (i) =>
      (await db.count(
        "invitation_insert",
        `INSERT INTO invitations (invitation_id, account_id, email, role, code_hash, expires_at, created_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT DO NOTHING`,
        [...invitationValues(i)],
      )) > 0,
    byId: (accountId, invitationId) =>
      first("invitation_by_id", "SELECT * FROM invitations WHERE account_id = $1 AND invitation_id = $2", [
        accountId,
        invitationId,
      ]),
    byEmail: (accountId, email) =>
      first(
        "invitation_by_email",
        `SELECT * FROM invitations WHERE account_id = $1 AND (lower(email) COLLATE "C") = lower($2)`,
        [accountId, email],
      ),
    byCode: (codeHash) => first("invitation_by_code", "SELECT * FROM invitations WHERE code_hash = $1", [codeHash]),
    listForAccount: async (accountId) =>
      (
        await db.rows<InvitationRow>(
          "invitation_list",
          `SELECT * FROM invitations WHERE account_id = $1 ORDER BY lower(email) COLLATE "C"`,
          [accountId],
        )
      ).map(toInvitation),
    update: async (i) =>
      (await db.count(
        "invitation_update",
        `UPDATE invitations SET role = $1, code_hash = $2, expires_at = $3
           WHERE invitation_id = $4 AND account_id = $5`,
        [i.role, i.codeHash, i.expiresAt, i.invitationId, i.accountId],
      )) > 0,
    remove: async (accountId, invitationId) =>
      (await db.count("invitation_remove", "DELETE FROM invitations WHERE account_id = $1 AND invitation_id = $2", [
        accountId,
        invitationId,
      ])) > 0,
    take: async (codeHash, now) =>
      (await db.count("invitation_take", "DELETE FROM invitations WHERE code_hash = $1 AND expires_at > $2", [
        codeHash,
        now,
      ])) > 0,
  };
}
