import type { MemberRepository } from "../../domain/account/repository.js";
import { memberUpdateValues, toMember } from "../account-rows.js";
import { memberValues } from "../invitation-rows.js";
import type { PgDb } from "./db.js";
import { all, changed, first } from "./query.js";

const INSERT = `INSERT INTO members (member_id, account_id, email, role, password_hash, invitation_hash,
    invitation_expires_at, created_at, joined_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`;
/** Members of accounts in PostgreSQL; e-mails compare case-insensitively, as accounts' do. */
export function pgMembers(db: PgDb): MemberRepository {
  return {
    insert: async (m) => void (await db.count("member_insert", INSERT, [...memberValues(m)])),
    // The e-mail's unique index decides: of two accounts' invitations accepted at once, one person joins.
    join: (m) => changed(db, "member_join", `${INSERT} ON CONFLICT DO NOTHING`, memberValues(m)),
    byId: (accountId, memberId) =>
      first(
        db,
        "member_by_id",
        "SELECT * FROM members WHERE account_id = $1 AND member_id = $2",
        [accountId, memberId],
        toMember,
      ),
    byEmail: (email) =>
      first(
        db,
        "member_by_email",
        `SELECT * FROM members WHERE (lower(email) COLLATE "C") = lower($1)`,
        [email],
        toMember,
      ),
    byInvitation: (hash) =>
      first(db, "member_by_invitation", "SELECT * FROM members WHERE invitation_hash = $1", [hash], toMember),
    listForAccount: (accountId) =>
      all(
        db,
        "member_list",
        `SELECT * FROM members WHERE account_id = $1 ORDER BY lower(email) COLLATE "C"`,
        [accountId],
        toMember,
      ),
    update: (m) =>
      changed(
        db,
        "member_update",
        `UPDATE members SET role = $1, password_hash = $2, invitation_hash = $3, invitation_expires_at = $4,
           joined_at = $5 WHERE member_id = $6 AND account_id = $7`,
        memberUpdateValues(m),
      ),
    acceptInvitation: (hash, passwordHash, now) =>
      changed(
        db,
        "member_accept",
        `UPDATE members SET password_hash = $1, invitation_hash = NULL, invitation_expires_at = NULL, joined_at = $2
           WHERE invitation_hash = $3 AND invitation_expires_at > $2`,
        [passwordHash, now, hash],
      ),
    // Their name and picture go with them (what customers saw of them is no longer served).
    remove: async (accountId, memberId) =>
      (
        await db.rows(
          "member_remove",
          `WITH m AS (DELETE FROM members WHERE account_id = $1 AND member_id = $2 RETURNING account_id, email),
             p AS (DELETE FROM operator_profiles o USING m WHERE o.account_id = m.account_id AND o.email = lower(m.email))
           SELECT 1 FROM m`,
          [accountId, memberId],
        )
      ).length > 0,
  };
}
