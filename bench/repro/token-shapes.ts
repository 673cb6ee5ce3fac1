// `node bench/repro/token-shapes.ts` (or with `--import tsx`): what session 22 took out of every token call, each
// form side by side with the one that replaced it, alone in one process (this thread's CPU time per call, ns):
//
// - a JWT's payload made by spreading the token's own claims into the registered ones, against one object literal;
// - an object spread into a literal with two properties after it (accountForKey's answer), against writing it out;
// - a JSON route's call as an object literal with a getter, against a class;
// - a token call's answer as an object given to JSON.stringify, against its text written from the token;
// - a refresh token's row with its account read by better-sqlite3 as an object, against as an array (raw mode).
import { createRequire } from "node:module";
import { parseArgs } from "node:util";

const { values: opt } = parseArgs({ options: { rounds: { type: "string", default: "3" } } });
const N = 200_000;

function perCall(f: (i: number) => unknown): number {
  let sink = 0;
  const t0 = process.cpuUsage();
  for (let i = 0; i < N; i++) if (f(i)) sink++;
  const t = process.cpuUsage(t0);
  if (sink < 0) console.log(sink);
  return ((t.user + t.system) * 1000) / N;
}

const ids = {
  accountId: "0195f0e2-7c4d-7a3b-9c1d-2e3f4a5b6c7d",
  chatbotId: "1195f0e2-7c4d-7a3b-9c1d-2e3f4a5b6c7d",
  userId: "cust_00abc",
  sessionId: "2195f0e2-7c4d-7a3b-9c1d-2e3f4a5b6c7d",
};
const registered = (i: number) => ({
  ims: 1_764_349_200_000 + i,
  iss: "aiagent",
  aud: "aiagent:frame",
  iat: 1_764_349_200 + i,
  exp: 1_764_356_400 + i,
  jti: "abcdefghijklmnop",
});

const forms: [string, (i: number) => unknown, (i: number) => unknown][] = [
  [
    "JWT payload: spread of the claims + 7 | one literal",
    (i) => {
      const claims: Record<string, string> = { cid: ids.chatbotId, acc: ids.accountId };
      if (ids.sessionId) claims.sid = ids.sessionId;
      const r = registered(i);
      return JSON.stringify({
        ...claims,
        ims: r.ims,
        iss: r.iss,
        aud: r.aud,
        sub: ids.userId,
        iat: r.iat,
        exp: r.exp,
        jti: r.jti,
      });
    },
    (i) => {
      const r = registered(i);
      return JSON.stringify({
        cid: ids.chatbotId,
        acc: ids.accountId,
        sid: ids.sessionId || undefined,
        ims: r.ims,
        iss: r.iss,
        aud: r.aud,
        sub: ids.userId,
        iat: r.iat,
        exp: r.exp,
        jti: r.jti,
      });
    },
  ],
  (() => {
    const account = (i: number) => ({
      accountId: ids.accountId,
      email: "a@example.com",
      passwordHash: null,
      active: true,
      createdAt: i,
    });
    const markUsed = () => undefined;
    return [
      "a key's account: spread + 2 | written out",
      (i: number) => ({ ...account(i), apiKeyId: "k", markUsed }),
      (i: number) => {
        const a = account(i);
        return {
          accountId: a.accountId,
          email: a.email,
          passwordHash: a.passwordHash,
          active: a.active,
          createdAt: a.createdAt,
          apiKeyId: "k",
          markUsed,
        };
      },
    ] as [string, (i: number) => unknown, (i: number) => unknown];
  })(),
  (() => {
    const headers: Record<string, string> = { host: "x" };
    class Call {
      private controller: AbortController | undefined;
      constructor(
        private readonly h: Record<string, string>,
        readonly queryAccessToken: string | undefined,
      ) {}
      header(name: string) {
        return this.h[name];
      }
      get signal() {
        this.controller ??= new AbortController();
        return this.controller.signal;
      }
    }
    return [
      "a JSON route's call: literal with a getter | class",
      (i: number) => {
        let controller: AbortController | undefined;
        return {
          header: (name: string) => headers[name],
          queryAccessToken: i === -1 ? "" : undefined,
          get signal() {
            controller ??= new AbortController();
            return controller.signal;
          },
        };
      },
      (i: number) => new Call(headers, i === -1 ? "" : undefined),
    ] as [string, (i: number) => unknown, (i: number) => unknown];
  })(),
  (() => {
    const jwt = `eyJhbGciOiJFUzI1NiIsImtpZCI6ImFiY2RlZmdoaWprbG1ub3AiLCJ0eXAiOiJhdCtqd3QifQ.${"e".repeat(360)}.${"s".repeat(86)}`;
    return [
      "a refresh's answer: JSON.stringify | text",
      (i: number) => JSON.stringify({ data: { access_token: jwt, expires_at: 1_764_349_200_000 + i } }),
      (i: number) => `{"data":{"access_token":"${jwt}","expires_at":${1_764_349_200_000 + i}}}`,
    ] as [string, (i: number) => unknown, (i: number) => unknown];
  })(),
  (() => {
    const Database = createRequire(import.meta.url)("better-sqlite3");
    const db = new Database(":memory:");
    db.exec(`CREATE TABLE refresh_tokens (token_hash TEXT PRIMARY KEY, session_id TEXT, account_id TEXT, chatbot_id TEXT,
      user_id TEXT, created_at INTEGER, expires_at INTEGER, revoked_at INTEGER, last_used_at INTEGER, last_origin TEXT,
      user_agent TEXT); CREATE TABLE accounts (account_id TEXT PRIMARY KEY, active INTEGER)`);
    const insert = db.prepare("INSERT INTO refresh_tokens VALUES (?, ?, 'a', 'c', ?, 1, 2, NULL, 3, '', '')");
    for (let i = 0; i < 1000; i++) insert.run(`h${i}`, `s${i}`, `u${i}`);
    db.exec("INSERT INTO accounts VALUES ('a', 1)");
    const sql =
      "SELECT t.token_hash, t.session_id, t.account_id, t.chatbot_id, t.user_id, t.created_at, t.expires_at, " +
      "t.revoked_at, t.last_used_at, t.last_origin, t.user_agent, a.active FROM refresh_tokens t LEFT JOIN accounts a " +
      "ON a.account_id = t.account_id WHERE t.token_hash = ?";
    const asObject = db.prepare(sql);
    const asArray = db.prepare(sql).raw(true);
    return [
      "a refresh token's row: object | array",
      (i: number) => asObject.get(`h${i % 1000}`),
      (i: number) => asArray.get(`h${i % 1000}`),
    ] as [string, (i: number) => unknown, (i: number) => unknown];
  })(),
];

for (let r = 0; r < Number(opt.rounds); r++)
  for (const [name, before, after] of forms)
    console.log(`round ${r + 1} ${name}: ${perCall(before).toFixed(0)} | ${perCall(after).toFixed(0)} ns`);
