import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it, vi } from "vitest";
import { aiagent as runAiagent } from "../helpers/cli.js";
import { postJson } from "../helpers/http.js";
import { startServer } from "../helpers/server.js";
import { scaled } from "../helpers/time-scale.js";

// The bad arguments: cli-refusals.test.ts (in parallel). Each case runs the real command several times (a second
// or two each, more on a busy machine).
vi.setConfig({ testTimeout: scaled(120_000) });

const dir = mkdtempSync(join(tmpdir(), "aiagent-cli-"));
const db = join(dir, "cli.db");
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const aiagent = (...args: string[]) => runAiagent(args);

describe("the aiagent command", () => {
  it(
    "creates an account, a chatbot and an API key that the service then accepts",
    async () => {
      const acc = await aiagent("account", "create", "--email", "cli@example.com", "--db", db, "--json");
      expect(acc.code).toBe(0);
      const account = JSON.parse(acc.stdout) as { account_id: string; email: string };
      expect(account.email).toBe("cli@example.com");
      const bot = JSON.parse(
        (
          await aiagent(
            "chatbot",
            "create",
            "--email",
            "cli@example.com",
            "--name",
            "Helper",
            "--allowed-origin",
            "https://shop.example",
            "--db",
            db,
            "--json",
          )
        ).stdout,
      ) as { chatbot_id: string };
      expect(bot.chatbot_id).toMatch(/^[0-9a-f-]{36}$/);
      const key = JSON.parse(
        (await aiagent("api-key", "create", "--email", "cli@example.com", "--db", db, "--json")).stdout,
      ) as { client_api_key: string; account_id: string };
      expect(key.client_api_key).toMatch(/^cak_/);
      expect(key.account_id).toBe(account.account_id);

      const s = await startServer({ dir, env: { AIAGENT_DB: db } });
      try {
        const ok = await postJson(s.url, "/ai_agent/get_access_token", {
          user_id: "u",
          chatbot_id: bot.chatbot_id,
          client_api_key: key.client_api_key,
        });
        expect(ok.status).toBe(200);
        await s.close();
        // With no grace period the older key stops at once.
        const rotated = JSON.parse(
          (await aiagent("api-key", "rotate", "--email", "cli@example.com", "--grace", "0", "--db", db, "--json"))
            .stdout,
        ) as { client_api_key: string; older_keys: { api_key_id: string }[] };
        expect(rotated.older_keys).toHaveLength(1);
        const s2 = await startServer({ dir, env: { AIAGENT_DB: db } });
        try {
          expect(
            (
              await postJson(s2.url, "/ai_agent/get_access_token", {
                user_id: "u",
                chatbot_id: bot.chatbot_id,
                client_api_key: key.client_api_key,
              })
            ).status,
          ).toBe(401);
          expect(
            (
              await postJson(s2.url, "/ai_agent/get_access_token", {
                user_id: "u",
                chatbot_id: bot.chatbot_id,
                client_api_key: rotated.client_api_key,
              })
            ).status,
          ).toBe(200);
        } finally {
          await s2.close();
        }
      } finally {
        await s.close().catch(() => undefined);
      }
      const revoked = JSON.parse(
        (await aiagent("tokens", "revoke", "--email", "cli@example.com", "--db", db, "--json")).stdout,
      ) as { revoked: number };
      expect(revoked.revoked).toBe(2);
      const keys = JSON.parse((await aiagent("keys", "rotate", "--db", db, "--json")).stdout) as { kid: string };
      expect(keys.kid).not.toBe("");
    },
    scaled(120_000),
  );
});
