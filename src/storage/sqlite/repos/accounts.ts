import type { AccountRecord, AccountRepository } from "../../../domain/account/repository.js";
import { type AccountRow, accountValues, toAccount } from "../../account-rows.js";
import { bit } from "../../row-values.js";
import type { Sync } from "../../sync.js";
import type { Db } from "../database.js";
import { fileState, UnchangedMemo } from "./unchanged-memo.js";

const maybe = (r: AccountRow | undefined) => r && toAccount(r);

/** Accounts in SQLite. */
export function sqliteAccounts(db: Db): Sync<AccountRepository> {
  const insert = db.prepare(
    "INSERT INTO accounts (account_id, email, password_hash, active, created_at) VALUES (?, ?, ?, ?, ?)",
  );
  const byEmail = db.prepare<[string], AccountRow>("SELECT * FROM accounts WHERE email = ?");
  const byId = db.prepare<[string], AccountRow>("SELECT * FROM accounts WHERE account_id = ?");
  const any = db.prepare("SELECT 1 FROM accounts LIMIT 1");
  // In e-mail order from the unique index, a page at a time: the table grows, so it is never read in one go.
  const page = db.prepare<[string, number], AccountRow>(
    "SELECT * FROM accounts WHERE email > ? ORDER BY email LIMIT ?",
  );
  const setPassword = db.prepare("UPDATE accounts SET password_hash = ? WHERE account_id = ?");
  // Read by every call with an ID token (its account must still be active): kept while the file is unchanged.
  const ids = new UnchangedMemo<AccountRecord | undefined>(fileState(db));
  return {
    insert: (a) => void insert.run(...accountValues(a, bit)),
    byEmail: (email) => maybe(byEmail.get(email)),
    byId: (id) => ids.get(id, () => maybe(byId.get(id))),
    any: () => any.get() !== undefined,
    page: (afterEmail, limit) => page.all(afterEmail, limit).map(toAccount),
    setPassword: (id, hash) => void setPassword.run(hash, id),
  };
}
