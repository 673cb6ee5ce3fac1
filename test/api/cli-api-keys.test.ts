import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { hashSecret } from "../../src/domain/ids.js";
import { aiagent, aiagentJson } from "../helpers/cli.js";
import { postJson } from "../helpers/http.js";
import { startServer, type TestAccount, type TestServer } from "../helpers/server.js";
import { scaled } from "../helpers/time-scale.js";

// Each case runs the real command several times (a second or two each).
vi.setConfig({ testTimeout: scaled(120_000) });

// A real server (its clock movable) and the real command beside it on one SQLite file.
let s: TestServer;
let db: string;
beforeAll(async () => {
  s = await startServer();
  db = s.dbPath;
});
afterAll(() => s.close(true));

const HOUR = 3600_000;
const tokenStatus = async (a: TestAccount, key: string) =>
  (await postJson(s.url, "/ai_agent/get_access_token", { user_id: "u", chatbot_id: a.chatbotId, client_api_key: key }))
    .status;

interface KeyRow {
  api_key_id: string;
  prefix: string;
  name: string;
  status: string;
  created_at: string;
  last_used_at: string | null;
  expires_at: string | null;
  revoked_at: string | null;
}
const keys = async (email: string, env: Record<string, string> = {}) =>
  (await aiagentJson<{ api_keys: KeyRow[] }>(["api-key", "list", "--email", email, "--db", db], env)).api_keys;

interface Rotated {
  api_key_id: string;
  client_api_key: string;
  grace_seconds: number;
  older_keys: { api_key_id: string; prefix: string; expires_at: string }[];
}

describe("api-key rotate", () => {
  it("keeps the older key working through the grace period, then stops it; the new key works at once", async () => {
    const a = await s.account();
    const [old] = await keys(a.email);
    const rotated = await aiagentJson<Rotated>([
      "api-key",
      "rotate",
      "--email",
      a.email,
      "--grace",
      "3600",
      "--db",
      db,
    ]);
    expect(rotated.grace_seconds).toBe(3600);
    expect(rotated.older_keys.map((k) => k.api_key_id)).toEqual([old!.api_key_id]);

    expect(await tokenStatus(a, a.apiKey)).toBe(200);
    expect(await tokenStatus(a, rotated.client_api_key)).toBe(200);
    // One minute before the end of the grace period: still accepted.
    s.clock.advance(HOUR - 60_000);
    expect(await tokenStatus(a, a.apiKey)).toBe(200);
    // After it: refused like a revoked key; the new key goes on working.
    s.clock.advance(2 * 60_000);
    expect(await tokenStatus(a, a.apiKey)).toBe(401);
    expect(await tokenStatus(a, rotated.client_api_key)).toBe(200);
    const idToken = await postJson(s.url, "/get_id_token", { user_email_id: a.email, client_api_key: a.apiKey });
    expect(idToken.status).toBe(401);
  });

  it("gives 24 hours by default, AIAGENT_API_KEY_GRACE otherwise, never extends an earlier end, and refuses a bad --grace", async () => {
    const a = await s.account();
    const before = Date.now();
    const first = await aiagentJson<Rotated>(["api-key", "rotate", "--email", a.email, "--db", db]);
    const after = Date.now();
    expect(first.grace_seconds).toBe(86_400);
    const end = Date.parse(first.older_keys[0]!.expires_at);
    expect(end).toBeGreaterThanOrEqual(before + 24 * HOUR);
    expect(end).toBeLessThanOrEqual(after + 24 * HOUR);

    // A second rotation with a shorter grace moves both older keys' end earlier ...
    const second = await aiagentJson<Rotated>(["api-key", "rotate", "--email", a.email, "--db", db], {
      AIAGENT_API_KEY_GRACE: "60",
    });
    expect(second.grace_seconds).toBe(60);
    expect(second.older_keys).toHaveLength(2);
    for (const k of second.older_keys) expect(Date.parse(k.expires_at)).toBeLessThan(before + 2 * 60_000);
    // ... and a longer one never extends it.
    const third = await aiagentJson<Rotated>(["api-key", "rotate", "--email", a.email, "--grace", "7200", "--db", db]);
    const ends = new Map(third.older_keys.map((k) => [k.api_key_id, Date.parse(k.expires_at)]));
    expect(ends.get(first.api_key_id)).toBeLessThan(before + 2 * 60_000);
    expect(ends.get(second.api_key_id)).toBeGreaterThan(before + HOUR);

    const count = (await keys(a.email)).length;
    for (const grace of ["abc", "-1", "2592001", ""]) {
      const r = await aiagent(["api-key", "rotate", "--email", a.email, `--grace=${grace}`, "--db", db]);
      expect(r.code, grace).toBe(2);
      expect(r.stderr).toContain("--grace must be a whole number of seconds from 0 to 2592000");
    }
    const badEnv = await aiagent(["api-key", "rotate", "--email", a.email, "--db", db], {
      AIAGENT_API_KEY_GRACE: "1d",
    });
    expect(badEnv.code).toBe(1);
    expect(badEnv.stderr).toContain("AIAGENT_API_KEY_GRACE must be a whole number");
    expect(await keys(a.email)).toHaveLength(count);
  });
});

describe("api-key revoke", () => {
  it("needs --id or --all; a wrong id, or another account's, exits non-zero and revokes nothing", async () => {
    const a = await s.account();
    const other = await s.account();
    const [mine] = await keys(a.email);
    const [theirs] = await keys(other.email);

    const bare = await aiagent(["api-key", "revoke", "--email", a.email, "--db", db]);
    expect(bare.code).toBe(2);
    expect(bare.stderr).toContain("give --id KEY_ID to revoke one key, or --all");
    const both = await aiagent([
      "api-key",
      "revoke",
      "--email",
      a.email,
      "--id",
      mine!.api_key_id,
      "--all",
      "--db",
      db,
    ]);
    expect(both.code).toBe(2);
    const unknown = crypto.randomUUID();
    const wrong = await aiagent(["api-key", "revoke", "--email", a.email, "--id", unknown, "--db", db, "--json"]);
    expect(wrong.code).toBe(1);
    expect(JSON.parse(wrong.stdout).error).toBe(`api key ${unknown} of account ${a.email} not found`);
    const malformed = await aiagent(["api-key", "revoke", "--email", a.email, "--id", "key-1", "--db", db]);
    expect(malformed.code).toBe(1);
    expect(malformed.stderr).toContain("--id: must be a uuid");
    const foreign = await aiagent(["api-key", "revoke", "--email", a.email, "--id", theirs!.api_key_id, "--db", db]);
    expect(foreign.code).toBe(1);
    expect(foreign.stderr).toContain("not found");
    expect(await tokenStatus(a, a.apiKey)).toBe(200);
    expect(await tokenStatus(other, other.apiKey)).toBe(200);

    const second = await aiagentJson<{ client_api_key: string }>(["api-key", "create", "--email", a.email, "--db", db]);
    const one = await aiagentJson<{ revoked: number }>([
      "api-key",
      "revoke",
      "--email",
      a.email,
      "--id",
      mine!.api_key_id,
      "--db",
      db,
    ]);
    expect(one.revoked).toBe(1);
    expect(await tokenStatus(a, a.apiKey)).toBe(401);
    expect(await tokenStatus(a, second.client_api_key)).toBe(200);
    const all = await aiagentJson<{ revoked: number }>(["api-key", "revoke", "--email", a.email, "--all", "--db", db]);
    expect(all.revoked).toBe(1);
    expect(await tokenStatus(a, second.client_api_key)).toBe(401);
    expect(await tokenStatus(other, other.apiKey)).toBe(200);
    expect((await keys(a.email)).map((k) => k.status)).toEqual(["revoked", "revoked"]);
  });
});

describe("api-key list", () => {
  it("shows prefix, name, status, created and last used (to the minute), never the key or its hash", async () => {
    const a = await s.account();
    const named = await aiagentJson<{ api_key_id: string; client_api_key: string }>([
      "api-key",
      "create",
      "--email",
      a.email,
      "--name",
      "web shop",
      "--db",
      db,
    ]);
    // (The server's clock runs ahead of the command's in this file, so rows are picked by id, not position.)
    const row = async (id: string) => (await keys(a.email)).find((k) => k.api_key_id === id)!;
    const fresh = await keys(a.email);
    const unnamed = fresh.find((k) => k.api_key_id !== named.api_key_id)!;
    expect([unnamed.name, unnamed.status, unnamed.last_used_at]).toEqual(["", "active", null]);
    const mine = await row(named.api_key_id);
    expect([mine.name, mine.status, mine.last_used_at]).toEqual(["web shop", "active", null]);
    expect(mine.prefix).toBe(named.client_api_key.slice(0, 8));
    expect(Date.parse(mine.created_at)).toBeGreaterThan(0);

    expect(await tokenStatus(a, named.client_api_key)).toBe(200);
    const used = (await row(named.api_key_id)).last_used_at;
    expect(used).not.toBeNull();
    // Within the minute another use writes nothing; after it, the mark moves.
    s.clock.advance(30_000);
    expect(await tokenStatus(a, named.client_api_key)).toBe(200);
    expect((await row(named.api_key_id)).last_used_at).toBe(used);
    s.clock.advance(31_000);
    expect(await tokenStatus(a, named.client_api_key)).toBe(200);
    const later = (await row(named.api_key_id)).last_used_at!;
    expect(Date.parse(later)).toBeGreaterThanOrEqual(Date.parse(used!) + 60_000);
    expect((await row(unnamed.api_key_id)).last_used_at).toBeNull();

    const text = await aiagent(["api-key", "list", "--email", a.email, "--db", db]);
    const json = await aiagent(["api-key", "list", "--email", a.email, "--db", db, "--json"]);
    for (const secret of [a.apiKey, named.client_api_key]) {
      for (const out of [text.stdout, json.stdout]) {
        expect(out).not.toContain(secret);
        expect(out).not.toContain(hashSecret(secret));
      }
    }
    expect(text.stdout).toContain("web shop");
    expect(text.stdout).toContain(named.api_key_id);
  });
});
