import type { InvitationRepository } from "../../../domain/account/repository.js";
import { invitationValues, type InvitationRow as Row, toInvitation as toRecord } from "../../invitation-rows.js";
import type { Sync } from "../../sync.js";
import type { Db } from "../database.js";

/** Each account's pending invitations in SQLite (e-mails compare case-insensitively: the column is NOCASE). */
export function sqliteInvitations(db: Db): Sync<InvitationRepository> {
  const insert = db.prepare(
    `INSERT INTO invitations (invitation_id, account_id, email, role, code_hash, expires_at, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
  );
  const byId = db.prepare<[string, string], Row>(
    "SELECT * FROM invitations WHERE account_id = ? AND invitation_id = ?",
  );
  const byEmail = db.prepare<[string, string], Row>("SELECT * FROM invitations WHERE account_id = ? AND email = ?");
  const byCode = db.prepare<[string], Row>("SELECT * FROM invitations WHERE code_hash = ?");
  const list = db.prepare<[string], Row>("SELECT * FROM invitations WHERE account_id = ? ORDER BY email");
  const update = db.prepare(
    "UPDATE invitations SET role = ?, code_hash = ?, expires_at = ? WHERE invitation_id = ? AND account_id = ?",
  );
  const remove = db.prepare("DELETE FROM invitations WHERE account_id = ? AND invitation_id = ?");
  const take = db.prepare("DELETE FROM invitations WHERE code_hash = ? AND expires_at > ?");
  // Pending invitations are few (they end in a week): read without an index of their own.
  const earlier = db.prepare<[string, string, number, number], { one: number }>(
    "SELECT 1 AS one FROM invitations WHERE email = ? AND account_id <> ? AND expires_at > ? AND created_at < ? LIMIT 1",
  );
  const one = (r: Row | undefined) => r && toRecord(r);
  return {
    insert: (i) => insert.run(...invitationValues(i)).changes === 1,
    byId: (accountId, invitationId) => one(byId.get(accountId, invitationId)),
    byEmail: (accountId, email) => one(byEmail.get(accountId, email)),
    byCode: (codeHash) => one(byCode.get(codeHash)),
    listForAccount: (accountId) => list.all(accountId).map(toRecord),
    update: (i) => update.run(i.role, i.codeHash, i.expiresAt, i.invitationId, i.accountId).changes === 1,
    remove: (accountId, invitationId) => remove.run(accountId, invitationId).changes === 1,
    take: (codeHash, now) => take.run(codeHash, now).changes === 1,
    earlierElsewhere: (i, now) => earlier.get(i.email, i.accountId, now, i.createdAt) !== undefined,
  };
}
