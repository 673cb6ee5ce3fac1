import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { aiagent, aiagentJson } from "../helpers/cli.js";
import { issueTokens, send } from "../helpers/flows.js";
import { startServer, type TestAccount, type TestServer } from "../helpers/server.js";
import { scaled } from "../helpers/time-scale.js";

// Each case runs the real command (a second or two each, more on a busy machine).
vi.setConfig({ testTimeout: scaled(120_000) });

let s: TestServer;
let a: TestAccount;
beforeAll(async () => {
  s = await startServer();
  a = await s.account();
  const t = await issueTokens(s.url, a, "cli-customer", { contact_name: "Ada Cli" });
  await send(s.url, t.access_token, "my order 4471 is late");
  // The commands open the same SQLite file; the server is stopped so they have it to themselves.
  await s.close();
});
afterAll(() => s.close(true).catch(() => undefined));

describe("the aiagent command's privacy commands", () => {
  it("exports a customer's data, erases them, and then finds nothing", async () => {
    const db = ["--db", s.dbPath];
    const doc = await aiagentJson<any>(["contact", "export", "--email", a.email, "--user-id", "cli-customer", ...db]);
    expect(doc.contact).toMatchObject({ user_id: "cli-customer", contact_name: "Ada Cli" });
    expect(doc.conversations[0].messages[0].content).toBe("my order 4471 is late");

    const erased = await aiagentJson([
      "contact",
      "erase",
      "--email",
      a.email,
      "--contact-id",
      doc.contact.contact_id,
      ...db,
    ]);
    expect(erased).toMatchObject({ contact_id: doc.contact.contact_id, conversations: 1, messages: 2, sessions: 1 });
    const again = await aiagent(["contact", "export", "--email", a.email, "--user-id", "cli-customer", ...db]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain("not found");
  });

  it("sets a chatbot's retention and runs it", async () => {
    const db = ["--db", s.dbPath];
    const retentionSet = (days: string) => [
      "retention",
      "set",
      "--email",
      a.email,
      "--chatbot-id",
      a.chatbotId,
      "--days",
      days,
      ...db,
    ];
    const set = await aiagentJson(retentionSet("30"));
    expect(set).toEqual({ chatbot_id: a.chatbotId, days: 30 });
    expect(await aiagentJson(["retention", "run", ...db])).toEqual({ done: true });
    const bad = await aiagent(retentionSet("99999"));
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("--days");
  });

  it("refuses a command line naming the customer twice or not at all", async () => {
    for (const extra of [[], ["--user-id", "x", "--contact-id", "y"]]) {
      const r = await aiagent(["contact", "erase", "--email", a.email, ...extra, "--db", s.dbPath]);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain("--contact-id or --user-id");
    }
  });
});
