import type { CredentialChange, CredentialChangeRepository } from "../../../domain/token/credential-changes.js";
import type { Sync } from "../../sync.js";
import type { Db } from "../database.js";

/** Credential changes as the triggers of migration 25 record them (one writer: places commit in order). */
export function sqliteCredentialChanges(db: Db): Sync<CredentialChangeRepository> {
  const since = db.prepare<[number, string], CredentialChange>(
    "SELECT seq, subject FROM credential_changes WHERE seq > ? OR seq IN (SELECT value FROM json_each(?)) ORDER BY seq",
  );
  const last = db.prepare<[], { seq: number | null }>("SELECT max(seq) AS seq FROM credential_changes");
  const prune = db.prepare("DELETE FROM credential_changes WHERE at < ?");
  return {
    since: (after, missing) => since.all(after, JSON.stringify(missing)),
    last: () => last.get()?.seq ?? 0,
    prune: (before) => prune.run(before).changes,
  };
}
