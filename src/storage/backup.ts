import type { Config } from "../config.js";
import { BackupError, backupSqlite, restoreSqlite } from "./sqlite/backup.js";

export { BackupError } from "./sqlite/backup.js";

function onlySqlite(config: Config, command: string): void {
  if (config.databaseUrl)
    throw new BackupError(
      `'aiagent ${command}' copies a SQLite file; on PostgreSQL use pg_dump and pg_restore (docs/operations.md)`,
    );
}

/** A consistent copy of the configured database, taken while it serves, into the new file `dest`. */
export function backupDatabase(config: Config, dest: string): Promise<{ pages: number }> {
  onlySqlite(config, "backup");
  return backupSqlite(config.dbPath, dest);
}

/** The backup `from` put in place as the configured database, unless a server holds it. */
export function restoreDatabase(config: Config, from: string): Promise<{ pages: number; kept: string | undefined }> {
  onlySqlite(config, "restore");
  return restoreSqlite(from, config.dbPath);
}
