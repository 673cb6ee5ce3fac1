import type { DemoSetupRecord, DemoSetupRepository } from "../../../domain/account/repository.js";
import type { Sync } from "../../sync.js";
import type { Db } from "../database.js";

interface Row {
  account_id: string;
  chatbot_id: string;
  api_key_id: string;
}

/** The demo's setup in SQLite: one row, replaced when a restart issues the demo a new key. */
export function sqliteDemoSetup(db: Db): Sync<DemoSetupRepository> {
  const get = db.prepare<[], Row>("SELECT account_id, chatbot_id, api_key_id FROM demo_setup WHERE id = 1");
  const set = db.prepare(
    "INSERT INTO demo_setup (id, account_id, chatbot_id, api_key_id) VALUES (1, ?, ?, ?) " +
      "ON CONFLICT (id) DO UPDATE SET account_id = excluded.account_id, chatbot_id = excluded.chatbot_id, api_key_id " +
      "= excluded.api_key_id",
  );
  return {
    get: () => {
      const r = get.get();
      return r && { accountId: r.account_id, chatbotId: r.chatbot_id, apiKeyId: r.api_key_id };
    },
    set: (r: DemoSetupRecord) => void set.run(r.accountId, r.chatbotId, r.apiKeyId),
  };
}
