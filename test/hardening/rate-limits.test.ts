import { randomUUID } from "node:crypto";
import { Code, ConnectError } from "@connectrpc/connect";
import { afterEach, describe, expect, it } from "vitest";
import { ErrorInfoSchema } from "../../gen/google/rpc/error_details_pb.js";
import { addressKey } from "../../src/protocol/rate-limit.js";
import { rpcClients } from "../helpers/rpc.js";
import { startServer, type TestAccount, type TestServer } from "../helpers/server.js";
import { sqliteDb } from "../helpers/sqlite.js";
import { dbChecksum, expectNoSecrets, postFrom } from "./support.js";

// All test traffic is loopback; 127.0.0.2… are other clients (Linux routes all of 127/8 to lo).
const ATTACKER = "127.0.0.2";
const OWNER = "127.0.0.1";

const servers: TestServer[] = [];
const secrets = new Set<string>();
afterEach(async () => {
  for (const s of servers.splice(0)) {
    expectNoSecrets(s.logs, secrets);
    await s.close(true);
  }
});

async function serverWith(env: Record<string, string>): Promise<TestServer> {
  const s = await startServer({ env });
  servers.push(s);
  return s;
}

async function account(s: TestServer): Promise<TestAccount> {
  const a = await s.account();
  secrets.add(a.apiKey).add(a.password);
  return a;
}

function issue(s: TestServer, a: TestAccount, from = OWNER, key = a.apiKey, userId = "customer") {
  return postFrom(
    s.url,
    "/ai_agent/get_access_token",
    { user_id: userId, chatbot_id: a.chatbotId, client_api_key: key },
    from,
  );
}

function expect429(r: { status: number; headers: Record<string, unknown>; body: any }) {
  expect(r.status).toBe(429);
  expect(r.body.code).toBe("resource_exhausted");
  expect(Number(r.headers["retry-after"])).toBeGreaterThan(0);
}

/** Runs n attempts, `width` at a time; returns their statuses in order. */
async function attempts(n: number, width: number, one: (i: number) => Promise<{ status: number }>): Promise<number[]> {
  const out: number[] = new Array(n);
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < n) {
        const i = next++;
        out[i] = (await one(i)).status;
      }
    }),
  );
  return out;
}

describe("brute force", () => {
  it("1,000 wrong API keys against one account from one address end in 429 while another account keeps working", async () => {
    // The per-address limit is off here (it is proved below): this is the per-target back-off alone.
    const s = await serverWith({
      AIAGENT_RATE_LIMIT_FAILURES_PER_ADDRESS: "0",
      AIAGENT_RATE_LIMIT_FAILURES_PER_TARGET: "20",
    });
    const victim = await account(s);
    const other = await account(s);
    const tokensOf = (a: TestAccount) =>
      (
        sqliteDb(s.app).prepare("SELECT count(*) AS n FROM refresh_tokens WHERE account_id = ?").get(a.accountId) as {
          n: number;
        }
      ).n;
    const [victimBefore, otherBefore] = [tokensOf(victim), tokensOf(other)];
    let otherOk = 0;
    const statuses = await attempts(1000, 8, async (i) => {
      if (i % 100 === 0) {
        // Meanwhile, from the same address, another account's server gets its tokens.
        const r = await issue(s, other, OWNER, other.apiKey, `c${i}`);
        if (r.status === 200) otherOk++;
        secrets.add(r.body.data.access_token).add(r.body.data.refresh_token);
      }
      return issue(s, victim, OWNER, `cak_guess${i}_${randomUUID()}`);
    });
    expect(otherOk).toBe(10);
    // Eight attempts in flight at once may all pass the check before the 20th failure is counted.
    expect(statuses.filter((x) => x === 401).length).toBeLessThanOrEqual(20 + 7);
    expect(statuses.filter((x) => x === 429).length).toBeGreaterThanOrEqual(1000 - 20 - 7);
    expect(new Set(statuses)).toEqual(new Set([401, 429]));
    expect429(await issue(s, victim, OWNER, "cak_one_more"));
    // Blocked is blocked: even the right key from that address waits (an attacker learns nothing from a 200).
    expect429(await issue(s, victim, OWNER));
    // The refused attempts wrote nothing for the victim; the other account's ten tokens were written.
    expect(tokensOf(victim)).toBe(victimBefore);
    expect(tokensOf(other)).toBe(otherBefore + 10);
    // The account's owner calling from its own server's address is not locked out.
    const owner = await issue(s, victim, ATTACKER);
    expect(owner.status).toBe(200);
    secrets.add(owner.body.data.access_token).add(owner.body.data.refresh_token);
    expect(tokensOf(victim)).toBe(victimBefore + 1);
  });

  it("wrong keys from one address against many chatbots: the address is blocked, other addresses are not", async () => {
    const s = await serverWith({ AIAGENT_RATE_LIMIT_FAILURES_PER_ADDRESS: "30" });
    const a = await account(s);
    const statuses = await attempts(200, 4, () =>
      postFrom(
        s.url,
        "/ai_agent/get_access_token",
        { user_id: "u", chatbot_id: randomUUID(), client_api_key: "cak_guess" },
        ATTACKER,
      ),
    );
    expect(statuses.filter((x) => x === 401).length).toBeLessThanOrEqual(30 + 3);
    expect(statuses.at(-1)).toBe(429);
    expect429(await issue(s, a, ATTACKER));
    const ok = await issue(s, a, OWNER);
    expect(ok.status).toBe(200);
    secrets.add(ok.body.data.access_token).add(ok.body.data.refresh_token);
  });

  it("wrong refresh tokens are counted the same way; a revoked one (ours, not a guess) is refused but not counted", async () => {
    const s = await serverWith({ AIAGENT_RATE_LIMIT_FAILURES_PER_TARGET: "5" });
    const a = await account(s);
    const t = (await issue(s, a, OWNER, a.apiKey, "revoked-user")).body.data;
    secrets.add(t.access_token).add(t.refresh_token);
    await s.app.tokens.revocations.revoke({ accountId: a.accountId, userId: "revoked-user" });
    const revoked = await attempts(15, 1, () =>
      postFrom(
        s.url,
        "/ai_agent/refresh_token",
        { user_id: "revoked-user", chatbot_id: a.chatbotId, refresh_token: t.refresh_token },
        OWNER,
      ),
    );
    expect(revoked.every((x) => x === 401)).toBe(true);
    expect((await issue(s, a, OWNER)).status).toBe(200);
    const guesses = await attempts(15, 1, (i) =>
      postFrom(
        s.url,
        "/ai_agent/refresh_token",
        { user_id: "u", chatbot_id: a.chatbotId, refresh_token: `rt_guess${i}` },
        ATTACKER,
      ),
    );
    expect(guesses.slice(0, 5).every((x) => x === 401)).toBe(true);
    expect(guesses.slice(5).every((x) => x === 429)).toBe(true);
  });

  it("wrong passwords for one account from many addresses block its password log-in, not its API-key log-in or other accounts", async () => {
    const s = await serverWith({ AIAGENT_RATE_LIMIT_PASSWORD_FAILURES: "5" });
    const a = await account(s);
    const b = await account(s);
    for (let i = 0; i < 5; i++) {
      const r = await postFrom(
        s.url,
        "/get_id_token",
        { user_email_id: a.email, password: `guess-${i}` },
        `127.0.0.${10 + i}`,
      );
      expect(r.status).toBe(401);
    }
    expect429(await postFrom(s.url, "/get_id_token", { user_email_id: a.email, password: a.password }, "127.0.0.99"));
    const byKey = await postFrom(s.url, "/get_id_token", { user_email_id: a.email, client_api_key: a.apiKey }, OWNER);
    expect(byKey.status).toBe(200);
    const otherByPassword = await postFrom(
      s.url,
      "/get_id_token",
      { user_email_id: b.email, password: b.password },
      "127.0.0.99",
    );
    expect(otherByPassword.status).toBe(200);
    secrets.add(byKey.body.data.idToken).add(otherByPassword.body.data.idToken);
  });
});

describe("a lock-out an attacker cannot turn against a person", () => {
  it("during an attack on an e-mail, the right password still works from a place the person signed in from", async () => {
    const s = await serverWith({ AIAGENT_RATE_LIMIT_PASSWORD_FAILURES: "5" });
    const a = await account(s);
    const HOME = "127.0.0.50";
    const before = await postFrom(s.url, "/get_id_token", { user_email_id: a.email, password: a.password }, HOME);
    expect(before.status).toBe(200);
    secrets.add(before.body.data.idToken);
    // An attacker spreads wrong passwords over addresses: the per-(e-mail, address) and per-address counters see
    // one each; the per-e-mail counter fills.
    for (let i = 0; i < 8; i++)
      await postFrom(s.url, "/get_id_token", { user_email_id: a.email, password: `guess-${i}` }, `127.0.0.${10 + i}`);
    const home = await postFrom(s.url, "/get_id_token", { user_email_id: a.email, password: a.password }, HOME);
    expect(home.status).toBe(200);
    secrets.add(home.body.data.idToken);
    // A place never used waits, and the answer says why and for how long.
    const elsewhere = await postFrom(
      s.url,
      "/get_id_token",
      { user_email_id: a.email, password: a.password },
      "127.0.0.99",
    );
    expect429(elsewhere);
    expect(elsewhere.body.message).toMatch(/places it has not signed in from .* retry after \d+ s/);
    // Wrong passwords from the known place are still throttled there, per (e-mail, address) and per address.
    const statuses: number[] = [];
    for (let i = 0; i < 22; i++)
      statuses.push(
        (await postFrom(s.url, "/get_id_token", { user_email_id: a.email, password: `x${i}` }, HOME)).status,
      );
    expect(statuses.at(-1)).toBe(429);
  });
});

describe("request rates", () => {
  it("per client address", async () => {
    const s = await serverWith({ AIAGENT_RATE_LIMIT_PER_ADDRESS: "25" });
    const a = await account(s);
    const statuses = await attempts(30, 1, (i) => issue(s, a, ATTACKER, a.apiKey, `u${i}`));
    expect(statuses.slice(0, 25).every((x) => x === 200)).toBe(true);
    expect(statuses.slice(25).every((x) => x === 429)).toBe(true);
    expect((await issue(s, a, OWNER)).status).toBe(200);
  });

  it("per API key: a leaked key used from many addresses is slowed; the account's other key is not", async () => {
    const s = await serverWith({ AIAGENT_RATE_LIMIT_PER_KEY: "20", AIAGENT_RATE_LIMIT_PER_ACCOUNT: "0" });
    const a = await account(s);
    const second = (await s.app.accounts.createApiKey(a.email)).clientApiKey;
    secrets.add(second);
    const statuses = await attempts(24, 1, (i) => issue(s, a, `127.0.1.${i}`, a.apiKey, `u${i}`));
    expect(statuses.slice(0, 20).every((x) => x === 200)).toBe(true);
    expect(statuses.slice(20).every((x) => x === 429)).toBe(true);
    expect((await issue(s, a, OWNER, second)).status).toBe(200);
  });

  it("per account: once its budget is spent, a request is refused before anything is written; other accounts go on", async () => {
    const s = await serverWith({ AIAGENT_RATE_LIMIT_PER_ACCOUNT: "10" });
    const a = await account(s);
    const b = await account(s);
    let refresh = "";
    for (let i = 0; i < 10; i++) {
      const r = await issue(s, a, OWNER, a.apiKey, `u${i}`);
      expect(r.status).toBe(200);
      refresh = r.body.data.refresh_token;
      secrets.add(refresh).add(r.body.data.access_token);
    }
    const before = dbChecksum(sqliteDb(s.app));
    expect429(await issue(s, a, OWNER, a.apiKey, "new-customer"));
    expect429(
      await postFrom(
        s.url,
        "/ai_agent/refresh_token",
        { user_id: "u9", chatbot_id: a.chatbotId, refresh_token: refresh },
        OWNER,
      ),
    );
    expect429(await postFrom(s.url, "/get_id_token", { user_email_id: a.email, client_api_key: a.apiKey }, OWNER));
    expect(dbChecksum(sqliteDb(s.app))).toBe(before);
    expect((await issue(s, b, OWNER)).status).toBe(200);
  });

  it("AIAGENT_RATE_LIMIT=off lifts every limit (load tests)", async () => {
    const s = await serverWith({
      AIAGENT_RATE_LIMIT: "off",
      AIAGENT_RATE_LIMIT_PER_ADDRESS: "1",
      AIAGENT_RATE_LIMIT_FAILURES_PER_ADDRESS: "1",
    });
    const a = await account(s);
    const statuses = await attempts(10, 2, (i) => issue(s, a, OWNER, i % 2 ? "cak_wrong" : a.apiKey, `u${i}`));
    expect(statuses.filter((x) => x === 200).length).toBe(5);
    expect(statuses.filter((x) => x === 401).length).toBe(5);
  });
});

describe("over RPC", () => {
  it("the same limits answer resource_exhausted with the delay in a header and in the ErrorInfo detail", async () => {
    const s = await serverWith({ AIAGENT_RATE_LIMIT_FAILURES_PER_TARGET: "3" });
    const a = await account(s);
    for (const protocol of ["connect-json", "connect-binary", "grpc"] as const) {
      const { tokens } = rpcClients(s.url, protocol);
      const chatbotId = randomUUID();
      let last: unknown;
      for (let i = 0; i < 5; i++) {
        try {
          await tokens.getAccessToken({ userId: "u", chatbotId, clientApiKey: `cak_guess${i}` });
        } catch (e) {
          last = e;
        }
      }
      const err = ConnectError.from(last);
      expect(err.code).toBe(Code.ResourceExhausted);
      expect(Number(err.metadata.get("retry-after"))).toBeGreaterThan(0);
      expect(Number(err.findDetails(ErrorInfoSchema)[0]?.metadata.retry_after_seconds)).toBeGreaterThan(0);
    }
    void a;
  });
});

describe("client address keys", () => {
  it("IPv4-mapped addresses count as IPv4, and IPv6 addresses by their /64", () => {
    expect(addressKey("::ffff:192.0.2.7")).toBe("192.0.2.7");
    expect(addressKey("192.0.2.7")).toBe("192.0.2.7");
    expect(addressKey("2001:db8:1:2:aaaa::1")).toBe(addressKey("2001:0db8:0001:0002:ffff:ffff:ffff:ffff"));
    expect(addressKey("2001:db8:1:2::1")).not.toBe(addressKey("2001:db8:1:3::1"));
    expect(addressKey("::1")).toBe("0:0:0:0::/64");
  });
});
