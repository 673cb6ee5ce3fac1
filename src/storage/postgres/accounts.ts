import type { AccountRepository } from "../../domain/account/repository.js";
import { accountValues, toAccount } from "../account-rows.js";
import { bool } from "../row-values.js";
import type { PgDb } from "./db.js";
import { all, execute, first } from "./query.js";

/** Accounts in PostgreSQL; e-mails are unique and found case-insensitively. */
export function pgAccounts(db: PgDb): AccountRepository {
  return {
    insert: (a) =>
      execute(
        db,
        "acc_insert",
        "INSERT INTO accounts (account_id, email, password_hash, active, created_at) VALUES ($1, $2, $3, $4, $5)",
        accountValues(a, bool),
      ),
    byEmail: (email) =>
      first(
        db,
        "acc_by_email",
        `SELECT * FROM accounts WHERE (lower(email) COLLATE "C") = lower($1)`,
        [email],
        toAccount,
      ),
    byId: (id) => first(db, "acc_by_id", "SELECT * FROM accounts WHERE account_id = $1", [id], toAccount),
    any: async () => (await db.rows("acc_any", "SELECT 1 FROM accounts LIMIT 1", [])).length > 0,
    page: (after, limit) =>
      all(
        db,
        "acc_page",
        `SELECT * FROM accounts WHERE (lower(email) COLLATE "C") > lower($1) ORDER BY (lower(email) COLLATE "C") LIMIT $2`,
        [after, limit],
        toAccount,
      ),
    setPassword: (id, hash) =>
      execute(db, "acc_set_password", "UPDATE accounts SET password_hash = $1 WHERE account_id = $2", [hash, id]),
  };
}
