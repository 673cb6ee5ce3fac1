import type { MemberRepository } from "../../../domain/account/repository.js";
import { type MemberRow, memberUpdateValues, toMember } from "../../account-rows.js";
import { memberValues } from "../../invitation-rows.js";
import type { Sync } from "../../sync.js";
import type { Db } from "../database.js";

/** Members of accounts in SQLite. */
export function sqliteMembers(db: Db): Sync<MemberRepository> {
  const columns = `INSERT INTO members (member_id, account_id, email, role, password_hash, invitation_hash,
       invitation_expires_at, created_at, joined_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`;
  const insert = db.prepare(columns);
  // The e-mail's unique index decides: of two accounts' invitations accepted at once, one person joins.
  const join = db.prepare(`${columns} ON CONFLICT DO NOTHING`);
  const byId = db.prepare<[string, string], MemberRow>("SELECT * FROM members WHERE account_id = ? AND member_id = ?");
  const byEmail = db.prepare<[string], MemberRow>("SELECT * FROM members WHERE email = ?");
  const byInvitation = db.prepare<[string], MemberRow>("SELECT * FROM members WHERE invitation_hash = ?");
  const list = db.prepare<[string], MemberRow>("SELECT * FROM members WHERE account_id = ? ORDER BY email");
  const update = db.prepare(
    `UPDATE members SET role = ?, password_hash = ?, invitation_hash = ?, invitation_expires_at = ?, joined_at = ?
       WHERE member_id = ? AND account_id = ?`,
  );
  const removeOf = db.prepare<[string, string], { email: string }>(
    "DELETE FROM members WHERE account_id = ? AND member_id = ? RETURNING email",
  );
  const removeProfile = db.prepare("DELETE FROM operator_profiles WHERE account_id = ? AND email = ?");
  // Their name and picture go with them (what customers saw of them is no longer served).
  const remove = db.transaction((accountId: string, memberId: string) => {
    const m = removeOf.get(accountId, memberId);
    if (m) removeProfile.run(accountId, m.email.toLowerCase());
    return m !== undefined;
  });
  const accept = db.prepare(
    `UPDATE members SET password_hash = ?, invitation_hash = NULL, invitation_expires_at = NULL, joined_at = ?
       WHERE invitation_hash = ? AND invitation_expires_at > ?`,
  );
  return {
    insert: (m) => void insert.run(...memberValues(m)),
    join: (m) => join.run(...memberValues(m)).changes === 1,
    byId: (accountId, memberId) => {
      const r = byId.get(accountId, memberId);
      return r && toMember(r);
    },
    byEmail: (email) => {
      const r = byEmail.get(email);
      return r && toMember(r);
    },
    byInvitation: (hash) => {
      const r = byInvitation.get(hash);
      return r && toMember(r);
    },
    listForAccount: (accountId) => list.all(accountId).map(toMember),
    update: (m) => update.run(...memberUpdateValues(m)).changes === 1,
    acceptInvitation: (hash, passwordHash, now) => accept.run(passwordHash, now, hash, now).changes === 1,
    remove: (accountId, memberId) => remove(accountId, memberId),
  };
}
