import type { AccountRecord, AccountRepository } from "../../domain/account/repository.js";
import type { PgDb } from "./db.js";

type Row = Record<string, unknown>;

const toAccount = (r: Row): AccountRecord => ({
  accountId: r.account_id as string,
  email: r.email as string,
  passwordHash: (r.password_hash as string | null) ?? null,
  active: r.active as boolean,
  createdAt: Number(r.created_at),
});

/** Accounts in PostgreSQL; e-mails are unique and found case-insensitively. */
export function pgAccounts(db: PgDb): AccountRepository {
  return {
    insert: async (a) =>
      void (await db.count(
        "acc_insert",
        "INSERT INTO accounts (account_id, email, password_hash, active, created_at) VALUES ($1, $2, $3, $4, $5)",
        [a.accountId, a.email, a.passwordHash, a.active, a.createdAt],
      )),
    byEmail: async (email) =>
      (
        await db.rows("acc_by_email", `SELECT * FROM accounts WHERE (lower(email) COLLATE "C") = lower($1)`, [email])
      ).map(toAccount)[0],
    byId: async (id) =>
      (await db.rows("acc_by_id", "SELECT * FROM accounts WHERE account_id = $1", [id])).map(toAccount)[0],
    any: async () => (await db.rows("acc_any", "SELECT 1 FROM accounts LIMIT 1", [])).length > 0,
    page: async (after, limit) =>
      (
        await db.rows(
          "acc_page",
          `SELECT * FROM accounts WHERE (lower(email) COLLATE "C") > lower($1) ORDER BY (lower(email) COLLATE "C") LIMIT $2`,
          [after, limit],
        )
      ).map(toAccount),
    setPassword: async (id, hash) =>
      void (await db.count("acc_set_password", "UPDATE accounts SET password_hash = $1 WHERE account_id = $2", [
        hash,
        id,
      ])),
  };
}
