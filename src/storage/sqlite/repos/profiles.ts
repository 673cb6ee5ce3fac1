import {
  DEFAULT_ALERTS,
  type OperatorProfile,
  type OperatorProfileRepository,
} from "../../../domain/account/operator-profile.js";
import type { Sync } from "../../sync.js";
import type { Db } from "../database.js";

/** The people's display names and pictures in SQLite, one row per (account, lower-cased e-mail). */
export function sqliteProfiles(db: Db): Sync<OperatorProfileRepository> {
  const get = db.prepare<[string, string], { display_name: string; avatar_url: string }>(
    "SELECT display_name, avatar_url FROM operator_profiles WHERE account_id = ? AND email = ?",
  );
  const set = db.prepare(
    `INSERT INTO operator_profiles (account_id, email, display_name, avatar_url, updated_at) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT (account_id, email) DO UPDATE SET display_name = excluded.display_name,
       avatar_url = excluded.avatar_url, updated_at = excluded.updated_at`,
  );
  const alerts = db
    .prepare<[string, string], number>(
      "SELECT sla_breach_email FROM operator_profiles WHERE account_id = ? AND email = ?",
    )
    .pluck();
  const setAlerts = db.prepare(
    `INSERT INTO operator_profiles (account_id, email, display_name, avatar_url, updated_at, sla_breach_email)
     VALUES (?, ?, '', '', ?, ?)
     ON CONFLICT (account_id, email) DO UPDATE SET sla_breach_email = excluded.sla_breach_email,
       updated_at = excluded.updated_at`,
  );
  return {
    alerts: (accountId, email) => {
      const v = alerts.get(accountId, email.toLowerCase());
      return v === undefined ? { ...DEFAULT_ALERTS } : { slaBreachEmail: v === 1 };
    },
    setAlerts: (accountId, email, a, now) =>
      void setAlerts.run(accountId, email.toLowerCase(), now, a.slaBreachEmail ? 1 : 0),
    get: (accountId: string, email: string) => {
      const r = get.get(accountId, email.toLowerCase());
      return r && { displayName: r.display_name, avatarUrl: r.avatar_url };
    },
    set: (accountId: string, email: string, p: OperatorProfile, now: number) =>
      void set.run(accountId, email.toLowerCase(), p.displayName, p.avatarUrl, now),
  };
}
