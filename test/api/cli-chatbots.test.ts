import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { isDomainError } from "../../src/domain/errors.js";
import { aiagent, aiagentJson } from "../helpers/cli.js";
import { send } from "../helpers/flows.js";
import { postJson } from "../helpers/http.js";
import { startServer, type TestServer } from "../helpers/server.js";
import { scaled } from "../helpers/time-scale.js";

// Each case runs the real command several times (a second or two each).
vi.setConfig({ testTimeout: scaled(120_000) });

// A real server and the real command, side by side on one SQLite file.
let s: TestServer;
let db: string;
const A = "owner-a@example.com";
const B = "owner-b@example.com";
const file = (name: string, content: unknown) => {
  const path = join(s.dir, name);
  writeFileSync(path, typeof content === "string" ? content : JSON.stringify(content));
  return path;
};
const GOOD_KNOWLEDGE = [
  { title: "Parcels", url: "https://shop.example/help/parcels", snippet: "Parcels arrive in 3 to 5 days." },
];

beforeAll(async () => {
  s = await startServer();
  db = s.dbPath;
  await aiagentJson(["account", "create", "--email", A, "--db", db]);
  await aiagentJson(["account", "create", "--email", B, "--password", "a long password", "--db", db]);
});
afterAll(() => s.close(true));

const list = (email: string) =>
  aiagentJson<{
    chatbots: { chatbot_id: string; name: string; allowed_origins: string[]; knowledge_snippets: number }[];
  }>(["chatbot", "list", "--email", email, "--db", db]);

describe("chatbot create refuses what can never work", () => {
  it("needs an exact allowed origin: none, or a wildcard, is refused with the reason and creates nothing", async () => {
    const none = await aiagent(["chatbot", "create", "--email", A, "--name", "Bot", "--db", db]);
    expect(none.code).toBe(1);
    expect(none.stderr).toContain("--allowed-origin: at least one is required");
    expect(none.stderr).toContain("never be embedded");
    for (const wildcard of ["*", "https://*.shop.example"]) {
      const r = await aiagent([
        "chatbot",
        "create",
        "--email",
        A,
        "--name",
        "Bot",
        "--allowed-origin",
        wildcard,
        "--db",
        db,
      ]);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain("is a wildcard");
    }
    expect((await list(A)).chatbots).toEqual([]);
  });

  it("needs knowledge to be a list of {title, url, snippet}: anything else is refused, naming what is wrong", async () => {
    const cases: [unknown, string][] = [
      [{ title: "t", url: "https://x.example", snippet: "s" }, "--knowledge file: knowledge: must be a JSON array"],
      [[{ title: "Parcels", snippet: "3 to 5 days" }], "knowledge[0].url: is required"],
      [["just text"], "knowledge[0]: must be an object"],
      [[{ title: "t", url: "javascript:alert(1)", snippet: "s" }], "knowledge[0].url: must be an http or https URL"],
    ];
    for (const [content, message] of cases) {
      const r = await aiagent([
        "chatbot",
        "create",
        "--email",
        A,
        "--name",
        "Bot",
        "--allowed-origin",
        "https://shop.example",
        "--knowledge",
        file("bad.json", content),
        "--db",
        db,
      ]);
      expect(r.code, message).toBe(1);
      expect(r.stderr).toContain(message);
    }
    const notJson = await aiagent([
      "chatbot",
      "create",
      "--email",
      A,
      "--name",
      "Bot",
      "--allowed-origin",
      "https://shop.example",
      "--knowledge",
      file("not.json", "title: Parcels"),
      "--db",
      db,
    ]);
    expect(notJson.code).toBe(2);
    expect(notJson.stderr).toContain("is not JSON");
    expect((await list(A)).chatbots).toEqual([]);
  });

  it("the rules live in the domain: the same refusals without the command", async () => {
    const refused = async (fn: () => Promise<unknown>) => {
      try {
        await fn();
      } catch (e) {
        if (isDomainError(e)) return e.message;
        throw e;
      }
      throw new Error("accepted");
    };
    const email = (await s.account()).email;
    expect(await refused(() => s.app.accounts.createChatbot(email, "Bot", []))).toMatch(
      /^allowed_origins: at least one/,
    );
    expect(await refused(() => s.app.accounts.createChatbot(email, "Bot", ["https://*.example"]))).toContain(
      "wildcard",
    );
    expect(await refused(() => s.app.accounts.createChatbot(email, "Bot", ["https://u:p@shop.example"]))).toContain(
      "user name or password",
    );
    const ok = ["https://shop.example"];
    expect(
      await refused(() => s.app.accounts.createChatbot(email, "Bot", ok, [{ title: "t", url: "/x", snippet: "s" }])),
    ).toBe('knowledge[0].url: "/x" is not an absolute URL');
    expect(
      await refused(() =>
        s.app.accounts.createChatbot(email, "Bot", ok, [{ title: "t", url: "https://x", snippet: "s", x: 1 }]),
      ),
    ).toContain('unknown field "x"');
    expect(
      await refused(() =>
        s.app.accounts.createChatbot(email, "Bot", ok, [{ title: " ", url: "https://x", snippet: "s" }]),
      ),
    ).toBe("knowledge[0].title: is required");
    expect(await refused(() => s.app.accounts.createChatbot(email, "Bot", ok, "[]"))).toContain("must be a JSON array");
  });

  it("a chatbot it accepts answers from its knowledge (no 503)", async () => {
    const bot = await aiagentJson<{ chatbot_id: string; allowed_origins: string[] }>([
      "chatbot",
      "create",
      "--email",
      A,
      "--name",
      "Parcel bot",
      "--allowed-origin",
      "https://shop.example/help",
      "--knowledge",
      file("good.json", GOOD_KNOWLEDGE),
      "--db",
      db,
    ]);
    // An address with a path is reduced to its origin, the form browsers compare.
    expect(bot.allowed_origins).toEqual(["https://shop.example"]);
    const key = await aiagentJson<{ client_api_key: string }>(["api-key", "create", "--email", A, "--db", db]);
    const t = await postJson(s.url, "/ai_agent/get_access_token", {
      user_id: "u1",
      chatbot_id: bot.chatbot_id,
      client_api_key: key.client_api_key,
    });
    expect(t.status).toBe(200);
    const reply = await send(s.url, t.body.data.access_token, "When will my parcel arrive?");
    expect(reply.reply.content).toContain("3 to 5 days");
    expect(reply.reply.documents[0].url).toBe("https://shop.example/help/parcels");
  });
});

describe("chatbot list and chatbot update", () => {
  it("lists the account's chatbots and changes name, origins and knowledge; another account's is not found", async () => {
    const created = await aiagentJson<{ chatbot_id: string }>([
      "chatbot",
      "create",
      "--email",
      A,
      "--name",
      "Before",
      "--allowed-origin",
      "https://old.example",
      "--db",
      db,
    ]);
    const id = created.chatbot_id;
    const before = (await list(A)).chatbots.find((c) => c.chatbot_id === id);
    expect(before).toMatchObject({ name: "Before", allowed_origins: ["https://old.example"], knowledge_snippets: 0 });

    // Another account: cannot see it, cannot change it, and is told only "not found".
    expect((await list(B)).chatbots).toEqual([]);
    const foreign = await aiagent([
      "chatbot",
      "update",
      "--email",
      B,
      "--chatbot-id",
      id,
      "--name",
      "Hijacked",
      "--db",
      db,
    ]);
    expect(foreign.code).toBe(1);
    expect(foreign.stderr).toContain(`chatbot ${id} not found`);

    const updated = await aiagentJson<{ name: string; allowed_origins: string[]; knowledge_snippets: number }>([
      "chatbot",
      "update",
      "--email",
      A,
      "--chatbot-id",
      id,
      "--name",
      "After",
      "--allowed-origin",
      "https://new.example",
      "--allowed-origin",
      "https://www.new.example",
      "--knowledge",
      file("update.json", GOOD_KNOWLEDGE),
      "--db",
      db,
    ]);
    expect(updated).toMatchObject({
      name: "After",
      allowed_origins: ["https://new.example", "https://www.new.example"],
      knowledge_snippets: 1,
    });

    // A refused update changes nothing.
    const bad = await aiagent([
      "chatbot",
      "update",
      "--email",
      A,
      "--chatbot-id",
      id,
      "--allowed-origin",
      "*",
      "--db",
      db,
    ]);
    expect(bad.code).toBe(1);
    const nothing = await aiagent(["chatbot", "update", "--email", A, "--chatbot-id", id, "--db", db]);
    expect(nothing.code).toBe(2);
    expect(nothing.stderr).toContain("nothing to change");
    const after = (await list(A)).chatbots.find((c) => c.chatbot_id === id);
    expect(after).toMatchObject({
      name: "After",
      allowed_origins: ["https://new.example", "https://www.new.example"],
      knowledge_snippets: 1,
    });

    // The running server embeds it for the new origins.
    const page = await fetch(`${s.url}/chatbot-iframe/${id}?user_id=u`);
    expect(page.headers.get("content-security-policy")).toContain(
      "frame-ancestors https://new.example https://www.new.example",
    );

    const text = await aiagent(["chatbot", "list", "--email", A, "--db", db]);
    expect(text.stdout).toContain("After");
    expect(text.stdout).toContain(id);
  });
});

describe("account list", () => {
  it("lists every account, with no password or hash", async () => {
    const r = await aiagentJson<{ accounts: { email: string; password: boolean; account_id: string }[] }>([
      "account",
      "list",
      "--db",
      db,
    ]);
    const byEmail = new Map(r.accounts.map((a) => [a.email, a]));
    expect(byEmail.get(A)?.password).toBe(false);
    expect(byEmail.get(B)?.password).toBe(true);
    const text = await aiagent(["account", "list", "--db", db]);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain(B);
    expect(text.stdout + JSON.stringify(r)).not.toMatch(/a long password|scrypt/);
    // Read a page at a time (the accounts table grows): small pages give the same list, in e-mail order.
    const emails = r.accounts.map((a) => a.email);
    const paged: string[] = [];
    for await (const a of s.app.accounts.listAccounts(1)) paged.push(a.email);
    expect(paged).toEqual(emails);
    const folded = emails.map((e) => e.toLowerCase());
    expect(folded).toEqual([...folded].sort());
  });
});
