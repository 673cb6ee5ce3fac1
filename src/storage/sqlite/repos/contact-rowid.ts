/**
 * Contacts of one account share one rowid range: account rowid × 2^32 + 1, 2, 3… (migration 3), so the
 * trigram index can be read for one account alone. Internal to the SQLite repositories.
 */
export const ACCOUNT_RANGE = 4294967296;

/** SQL for the next free contact rowid of the account bound to `param` (NULL for an unknown account). */
export function nextContactRowid(param: string): string {
  return `(SELECT coalesce(
      (SELECT x.rowid FROM contacts x WHERE x.rowid BETWEEN r.lo AND r.lo + ${ACCOUNT_RANGE - 1} ORDER BY x.rowid DESC
        LIMIT 1),
      r.lo) + 1
    FROM (SELECT a.rowid * ${ACCOUNT_RANGE} AS lo FROM accounts a WHERE a.account_id = ${param}) AS r)`;
}
