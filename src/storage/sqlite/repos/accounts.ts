import type { AccountRecord, AccountRepository } from "../../../domain/account/repository.js";
import type { Sync } from "../../sync.js";
import type { Db } from "../database.js";

interface Row {
  account_id: string;
  email: string;
  password_hash: string | null;
  active: number;
  created_at: number;
}
const toRecord = (r: Row | undefined): AccountRecord | undefined =>
  r && {
    accountId: r.account_id,
    email: r.email,
    passwordHash: r.password_hash,
    active: r.active === 1,
    createdAt: r.created_at,
  };

/** Accounts in SQLite. */
export function sqliteAccounts(db: Db): Sync<AccountRepository> {
  const insert = db.prepare(
    "INSERT INTO accounts (account_id, email, password_hash, active, created_at) VALUES (?, ?, ?, ?, ?)",
  );
  const byEmail = db.prepare<[string], Row>("SELECT * FROM accounts WHERE email = ?");
  const byId = db.prepare<[string], Row>("SELECT * FROM accounts WHERE account_id = ?");
  const any = db.prepare("SELECT 1 FROM accounts LIMIT 1");
  // In e-mail order from the unique index, a page at a time: the table grows, so it is never read in one go.
  const page = db.prepare<[string, number], Row>("SELECT * FROM accounts WHERE email > ? ORDER BY email LIMIT ?");
  const setPassword = db.prepare("UPDATE accounts SET password_hash = ? WHERE account_id = ?");
  return {
    insert: (a) => void insert.run(a.accountId, a.email, a.passwordHash, a.active ? 1 : 0, a.createdAt),
    byEmail: (email) => toRecord(byEmail.get(email)),
    byId: (id) => toRecord(byId.get(id)),
    any: () => any.get() !== undefined,
    page: (afterEmail, limit) => page.all(afterEmail, limit).map((r) => toRecord(r)!),
    setPassword: (id, hash) => void setPassword.run(hash, id),
  };
}
