import { connect as h2connect } from "node:http2";
import { decodeJwt, decodeProtectedHeader, importJWK, type JWK, SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KeySealer } from "../../src/domain/token/key-sealer.js";
import { idToken, issueTokens } from "../helpers/flows.js";
import { startServer, type TestAccount, type TestServer } from "../helpers/server.js";
import { sqliteDb } from "../helpers/sqlite.js";
import { dbChecksum, expectNoSecrets, rawRequest } from "./support.js";

// Every length limit of the README's table, exactly at its edge: accepted at N, refused at N + 1 (naming the field,
// and writing nothing). "Accepted" means the limit let it through: a well-formed wrong credential is then a 401.
const KEY_SECRET = "limit-edges-key-encryption-secret-0123456789";
let s: TestServer;
let a: TestAccount;
let id: string;
let accessToken: string;
const secrets = new Set<string>([KEY_SECRET]);

beforeAll(async () => {
  s = await startServer({ env: { AIAGENT_SECRETS: KEY_SECRET } });
  a = await s.account();
  secrets.add(a.apiKey).add(a.password);
  id = await idToken(s.url, a);
  accessToken = (await issueTokens(s.url, a, "edge-user")).access_token;
  secrets.add(id).add(accessToken);
});
afterAll(async () => {
  expectNoSecrets(s.logs, secrets);
  await s.close(true);
});

type Answer = { status: number; body: string };
const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  rawRequest(s.url, {
    method: "POST",
    path,
    headers: { "content-type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
const get = (path: string, headers: Record<string, string> = {}) => rawRequest(s.url, { path, headers });

/** At N: `accepted`; at N + 1: 400 naming the field, and nothing written. */
async function edge(
  field: string,
  n: number,
  call: (value: string) => Promise<Answer>,
  accepted: number,
  fill = "a",
): Promise<void> {
  const at = await call(fill.repeat(n));
  expect(at.status, `${field} at ${n}: ${at.body}`).toBe(accepted);
  const before = dbChecksum(sqliteDb(s.app));
  const over = await call(fill.repeat(n + 1));
  expect(over.status, `${field} at ${n + 1}: ${over.body}`).toBe(400);
  expect(JSON.parse(over.body).message).toContain(field);
  expect(JSON.parse(over.body).message).toContain(`at most ${n}`);
  expect(dbChecksum(sqliteDb(s.app)), `${field} at ${n + 1} wrote`).toBe(before);
}

const issue = (over: Record<string, unknown>) =>
  post("/ai_agent/get_access_token", {
    user_id: "edge-user",
    chatbot_id: a.chatbotId,
    client_api_key: a.apiKey,
    ...over,
  });

describe("length limits, at the edge", () => {
  it("ids, names and search: 256 characters", async () => {
    await edge("user_id", 256, (v) => issue({ user_id: v }), 200);
    await edge("contact.contact_name", 256, (v) => issue({ contact: { contact_name: v } }), 200);
    await edge("contact.phone_number", 256, (v) => issue({ contact: { phone_number: v } }), 200, "5");
    await edge(
      "search",
      256,
      (v) =>
        get(`/get_contact_conversations?user_email_id=${encodeURIComponent(a.email)}&search=${v}`, {
          authorization: `Bearer ${id}`,
        }),
      200,
    );
    // An e-mail of 256 characters is well-formed: an unknown one is a credential failure, not a length one.
    await edge(
      "user_email_id",
      256,
      (v) => post("/get_id_token", { user_email_id: `${v.slice(12)}@example.com`, client_api_key: a.apiKey }),
      401,
    );
  });

  it("message content: 8,000 characters", async () => {
    await edge("content", 8000, (v) => post(`/ai_agent/send_message?access_token=${accessToken}`, { content: v }), 200);
  });

  it("password 1,024 and API key 256 characters: past them 400, at them a wrong credential (401)", async () => {
    await edge("password", 1024, (v) => post("/get_id_token", { user_email_id: a.email, password: v }), 401);
    await edge("client_api_key", 256, (v) => issue({ client_api_key: `cak_${v.slice(4)}` }), 401);
  });

  it("tokens: 4,096 characters (a genuine token of exactly 4,096 is accepted; one more character, refused)", async () => {
    // Signed with the service's own key (decrypted with this test's secret), padded by a claim to the length wanted.
    const row = (await s.app.store.signingKeys.list()).find((k) => k.retiredAt === null)!;
    const key = await importJWK(JSON.parse(new KeySealer([KEY_SECRET]).open(row.privateJwk, row.kid)) as JWK, "ES256");
    // A base64url segment cannot have every length (n bytes make ceil(4n/3) characters), so a header parameter of
    // 0–2 characters moves the total by whole characters until the payload's padding lands exactly.
    const padded = async (length: number) => {
      const claims = decodeJwt(accessToken);
      const header = decodeProtectedHeader(accessToken);
      for (const hpad of ["", "h", "hh", "hhh"]) {
        const sign = (pad: string) =>
          new SignJWT({ ...claims, pad })
            .setProtectedHeader({ ...header, alg: "ES256", ...(hpad ? { pad: hpad } : {}) })
            .sign(key);
        const bare = await sign("");
        let pad = "p".repeat(Math.max(0, Math.floor(((length - bare.length) * 3) / 4) - 3));
        let token = await sign(pad);
        while (token.length < length) token = await sign((pad += "p"));
        if (token.length === length) return token;
      }
      throw new Error(`no token of exactly ${length} characters`);
    };
    const exact = await padded(4096);
    expect(exact.length).toBe(4096);
    secrets.add(exact);
    const conversations = (t: string) => get(`/ai_agent/conversations?access_token=${t}`);
    const atEdge = await conversations(exact);
    expect(atEdge.status, atEdge.body).toBe(200);
    const over = await padded(4097);
    secrets.add(over);
    const r = await conversations(over);
    expect(r.status).toBe(401);
    expect(JSON.parse(r.body).message).toBe("the access token is invalid");
  });

  it("JSON body: 64 KiB (65,536 bytes) passes, one byte more is 413", async () => {
    const body = JSON.stringify({ user_id: "edge-user", chatbot_id: a.chatbotId, client_api_key: a.apiKey });
    const at = await post("/ai_agent/get_access_token", body.padEnd(64 * 1024, " "));
    expect(at.status, at.body).toBe(200);
    secrets.add(JSON.parse(at.body).data.access_token).add(JSON.parse(at.body).data.refresh_token);
    const over = await post("/ai_agent/get_access_token", body.padEnd(64 * 1024 + 1, " "));
    expect(over.status).toBe(413);
  });

  it("URL with its query: 8,192 characters pass, one more is 414", async () => {
    const base = `/get_contact_conversations?user_email_id=${encodeURIComponent(a.email)}&search=`;
    const url = (n: number) => `${base}${"a".repeat(n - base.length)}`;
    // The search term is itself capped at 256 characters: at 8,192 the URL passes its cap and the term is refused.
    const at = await get(url(8192), { authorization: `Bearer ${id}` });
    expect(at.status, at.body).toBe(400);
    expect(JSON.parse(at.body).message).toContain("search");
    const over = await get(url(8193), { authorization: `Bearer ${id}` });
    expect(over.status).toBe(414);
  });

  it("HTTP/2 header list: 16 KiB passes, one byte more is 431", async () => {
    const session = h2connect(s.url);
    try {
      // The header list as the server counts it: every name and value, plus 32 bytes per field (RFC 9113 §6.5.2).
      const status = (size: number) =>
        new Promise<string>((resolve) => {
          const fixed = { ":method": "GET", ":path": "/healthz", ":scheme": "http", ":authority": new URL(s.url).host };
          const used =
            Object.entries(fixed).reduce((n, [k, v]) => n + k.length + v.length + 32, 0) + "x-pad".length + 32;
          const req = session.request({ ...fixed, "x-pad": "a".repeat(size - used) });
          req.on("response", (h) => resolve(String(h[":status"])));
          req.on("error", (e) => resolve(`error ${(e as NodeJS.ErrnoException).code}`));
          req.end();
          req.resume();
        });
      expect(await status(16 * 1024)).toBe("200");
      // One byte more: Node's client itself refuses to send past the size the server advertised, or, when sent,
      // the server answers 431 (input-hygiene.test.ts sends one far over it and pins the 431).
      expect(["431", "error ERR_HTTP2_STREAM_ERROR"]).toContain(await status(16 * 1024 + 1));
    } finally {
      session.destroy();
    }
  });
});
