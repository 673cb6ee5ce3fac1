import type { DemoSetupRepository } from "../../domain/account/repository.js";
import type { PgDb } from "./db.js";

/** The demo's one setup row. */
export function pgDemoSetup(db: PgDb): DemoSetupRepository {
  return {
    get: async () => {
      const [r] = await db.rows(
        "demo_get",
        "SELECT account_id, chatbot_id, api_key_id FROM demo_setup WHERE id = 1",
        [],
      );
      return (
        r && { accountId: r.account_id as string, chatbotId: r.chatbot_id as string, apiKeyId: r.api_key_id as string }
      );
    },
    set: async (r) =>
      void (await db.count(
        "demo_set",
        "INSERT INTO demo_setup (id, account_id, chatbot_id, api_key_id) VALUES (1, $1, $2, $3) ON CONFLICT (id) DO " +
          "UPDATE SET account_id = excluded.account_id, chatbot_id = excluded.chatbot_id, api_key_id = " +
          "excluded.api_key_id",
        [r.accountId, r.chatbotId, r.apiKeyId],
      )),
  };
}
