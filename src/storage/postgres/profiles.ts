import { DEFAULT_ALERTS, type OperatorProfileRepository } from "../../domain/account/operator-profile.js";
import type { PgDb } from "./db.js";

/** The people's display names and pictures in PostgreSQL, one row per (account, lower-cased e-mail). */
export function pgProfiles(db: PgDb): OperatorProfileRepository {
  return {
    alerts: async (accountId, email) => {
      const [r] = await db.rows<{ sla_breach_email: boolean }>(
        "profile_alerts",
        "SELECT sla_breach_email FROM operator_profiles WHERE account_id = $1 AND email = $2",
        [accountId, email.toLowerCase()],
      );
      return r ? { slaBreachEmail: r.sla_breach_email } : { ...DEFAULT_ALERTS };
    },
    setAlerts: async (accountId, email, a, now) =>
      void (await db.count(
        "profile_set_alerts",
        `INSERT INTO operator_profiles (account_id, email, display_name, avatar_url, updated_at, sla_breach_email)
         VALUES ($1, $2, '', '', $3, $4)
         ON CONFLICT (account_id, email) DO UPDATE SET sla_breach_email = excluded.sla_breach_email,
           updated_at = excluded.updated_at`,
        [accountId, email.toLowerCase(), now, a.slaBreachEmail],
      )),
    get: async (accountId, email) => {
      const [r] = await db.rows(
        "profile_get",
        "SELECT display_name, avatar_url FROM operator_profiles WHERE account_id = $1 AND email = $2",
        [accountId, email.toLowerCase()],
      );
      return r && { displayName: r.display_name as string, avatarUrl: r.avatar_url as string };
    },
    set: async (accountId, email, p, now) =>
      void (await db.count(
        "profile_set",
        `INSERT INTO operator_profiles (account_id, email, display_name, avatar_url, updated_at)
         VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (account_id, email) DO UPDATE SET display_name = excluded.display_name,
           avatar_url = excluded.avatar_url, updated_at = excluded.updated_at`,
        [accountId, email.toLowerCase(), p.displayName, p.avatarUrl, now],
      )),
  };
}
