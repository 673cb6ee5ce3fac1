import { expect, it } from "vitest";
import { aiagent } from "../helpers/cli.js";
import { addMember, idToken } from "../helpers/flows.js";
import { postJson } from "../helpers/http.js";
import { startServer } from "../helpers/server.js";
import { scaled } from "../helpers/time-scale.js";

it(
  "`aiagent account create` refuses the e-mail of a member of another account, and that member still signs in",
  async () => {
    const s = await startServer();
    const a = await s.account();
    const member = await addMember(s.url, await idToken(s.url, a), "member-of-one@example.com");
    await s.close();
    try {
      const r = await aiagent(["account", "create", "--email", member.email, "--db", s.dbPath, "--json"]);
      expect(r.code).toBe(1);
      expect(JSON.parse(r.stdout).error).toContain("already a member of an account");
      const again = await startServer({ dir: s.dir });
      try {
        // No account was made: the member's password sign-in still finds the member.
        const signIn = await postJson(again.url, "/get_id_token", {
          user_email_id: member.email,
          password: member.password,
        });
        expect(signIn.status).toBe(200);
      } finally {
        await again.close();
      }
    } finally {
      await s.close(true).catch(() => undefined);
    }
  },
  scaled(60_000),
);
