import type { CredentialChangeRepository } from "../../domain/token/credential-changes.js";
import type { PgDb } from "./db.js";
import { PgListener } from "./listen.js";

/** Where the triggers of migration 19 announce a credential change (one payload per transaction). */
export const CREDENTIALS_CHANNEL = "aiagent_credentials";

/** Credential changes as the triggers of migration 19 record them. */
export function pgCredentialChanges(db: PgDb): CredentialChangeRepository {
  return {
    since: async (after, missing) =>
      (
        await db.rows(
          "cred_since",
          "SELECT seq, subject FROM credential_changes WHERE seq > $1 OR seq = ANY($2::bigint[]) ORDER BY seq",
          [after, missing],
        )
      ).map((r) => ({ seq: Number(r.seq), subject: String(r.subject) })),
    last: async () => {
      const [r] = await db.rows("cred_last", "SELECT coalesce(max(seq), 0) AS seq FROM credential_changes", []);
      return Number(r?.seq ?? 0);
    },
    prune: (before) => db.count("cred_prune", "DELETE FROM credential_changes WHERE at < $1", [before]),
  };
}

/** Calls `changed` for each announced credential change and once after each reconnect (announcements lost). */
export async function listenForCredentials(url: string, changed: () => void): Promise<() => void> {
  const listener = new PgListener(url, CREDENTIALS_CHANNEL, () => changed());
  await listener.start();
  return () => listener.close();
}
