import { existsSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { type ClientRequest, request as httpRequest, type IncomingMessage } from "node:http";
import { connect as h2connect } from "node:http2";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { buildApp } from "../../src/app.js";
import { loadConfig } from "../../src/config.js";
import { createLogger } from "../../src/log.js";
import { issueTokens, send } from "../helpers/flows.js";
import { type JsonResponse, postJson } from "../helpers/http.js";
import { NO_CUSTOMER_LIMITS } from "../helpers/server.js";
import { durabilityFixture, expectConsistent } from "./durability-fixture.js";
import { expectNoSecrets, startChild, TEST_SECRETS } from "./support.js";

// Durability at SIGTERM under load.
const { secrets, children } = durabilityFixture();

/** An HTTP/1.1 request whose body is held back until `finish` is called; resolves `continued` once the server has read its headers. */
function heldRequest(url: string, path: string, body: string) {
  const u = new URL(url);
  let req!: ClientRequest;
  const response = new Promise<{ status: number; body: string }>((resolve, reject) => {
    req = httpRequest(
      {
        host: u.hostname,
        port: u.port,
        method: "POST",
        path,
        agent: false,
        headers: {
          "content-type": "application/json",
          "content-length": String(Buffer.byteLength(body)),
          expect: "100-continue",
        },
      },
      (res: IncomingMessage) => {
        let text = "";
        res.on("data", (c: Buffer) => (text += c.toString("utf8")));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }));
      },
    );
    req.on("error", reject);
  });
  // Node's server answers 100 Continue when the request handler starts: the request is then in flight.
  const continued = new Promise<void>((resolve) => req.once("continue", () => resolve()));
  req.flushHeaders();
  return { response, continued, finish: () => req.end(body) };
}

describe("SIGTERM", () => {
  it("under load: in-flight requests finish, the WAL is checkpointed, the process exits 0, and every acknowledged message is stored", async () => {
    const dir = mkdtempSync(join(tmpdir(), "aiagent-sigterm-"));
    const dbPath = join(dir, "aiagent.db");
    const setup = await buildApp(
      loadConfig({ AIAGENT_DB: dbPath, AIAGENT_SECRETS: TEST_SECRETS }),
      createLogger("silent"),
    );
    const email = "sigterm@example.com";
    await setup.accounts.createAccount(email);
    const chatbotId = (await setup.accounts.createChatbot(email, "bot", ["https://shop.example"], [])).chatbotId;
    const apiKey = (await setup.accounts.createApiKey(email)).clientApiKey;
    await setup.close();
    secrets.add(apiKey);

    const c = await startChild(dbPath, NO_CUSTOMER_LIMITS);
    children.push(c);
    const t = await issueTokens(c.url, { accountId: "", email, password: "", apiKey, chatbotId }, "sigterm-user");
    secrets.add(t.access_token).add(t.refresh_token);
    const conv = (await send(c.url, t.access_token, "hello")).conversation_id;
    const acknowledged = new Set<string>();
    const path = `/ai_agent/send_message?access_token=${t.access_token}`;

    // Load: writers that keep sending until the server stops answering.
    let stop = false;
    let terminated = false;
    let loadAcknowledged = 0;
    const loadFailures: string[] = [];
    const load = Array.from({ length: 4 }, async (_, w) => {
      for (let i = 0; i < 500 && !stop; i++) {
        let r: JsonResponse;
        try {
          r = await postJson(c.url, path, { conversation_id: conv, content: `load ${w}/${i}` });
        } catch (e) {
          // Connection refused or reset: the server has stopped accepting. Before SIGTERM that is a failure.
          if (!terminated) loadFailures.push(`writer ${w}: ${(e as Error).message}`);
          return;
        }
        expect(r.status).toBeLessThan(500);
        if (r.status === 200) {
          acknowledged.add(r.body.data.user_message.message_id);
          loadAcknowledged++;
        }
      }
    });
    // In flight: 10 requests whose headers the server has read, bodies not yet sent.
    const held = Array.from({ length: 10 }, (_, i) =>
      heldRequest(c.url, path, JSON.stringify({ conversation_id: conv, content: `held ${i}` })),
    );
    await Promise.all(held.map((h) => h.continued));
    // An HTTP/2 client (gRPC's transport) with an open connection is told to go away.
    const h2 = h2connect(c.url);
    await new Promise<void>((resolve, reject) =>
      h2
        .request({ ":path": "/healthz" })
        .on("response", () => resolve())
        .on("error", reject)
        .resume()
        .end(),
    );
    const goaway = new Promise<void>((resolve) => h2.once("goaway", () => resolve()));
    const h2closed = new Promise<void>((resolve) => h2.once("close", () => resolve()));
    h2.on("error", () => undefined);
    // The load has been answered before the signal, so the writes under way at it are real.
    while (loadAcknowledged === 0 && loadFailures.length === 0) await new Promise((r) => setImmediate(r));
    terminated = true;
    c.proc.kill("SIGTERM");
    while (!c.output.join("").includes('"msg":"stopping"')) await new Promise((r) => setImmediate(r));
    // It stops accepting: a new connection is refused, while the held requests below are still served.
    const fresh = await new Promise<string>((resolve) => {
      const u = new URL(c.url);
      httpRequest({ host: u.hostname, port: u.port, path: "/healthz", agent: false }, (res) =>
        resolve(`answered ${res.statusCode}`),
      )
        .on("error", (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message))
        .end();
    });
    // Refused, or reset when it reached the kernel's accept queue just before the listener closed: never answered.
    expect(["ECONNREFUSED", "ECONNRESET"]).toContain(fresh);
    for (const h of held) h.finish();
    const answers = await Promise.all(held.map((h) => h.response));
    for (const a of answers) {
      expect(a.status).toBe(200);
      acknowledged.add(JSON.parse(a.body).data.user_message.message_id);
    }
    stop = true;
    await Promise.all(load);
    await goaway;
    await h2closed;
    expect(await c.exited).toBe(0);
    children.splice(children.indexOf(c), 1);

    expect(c.output.join("")).toContain('"msg":"stopped"');
    expectNoSecrets(c.output, secrets);
    const wal = `${dbPath}-wal`;
    expect(!existsSync(wal) || statSync(wal).size === 0).toBe(true);
    const db = new Database(dbPath, { readonly: true });
    try {
      const stored = new Set(
        db
          .prepare<[], { message_id: string }>("SELECT message_id FROM messages")
          .all()
          .map((r) => r.message_id),
      );
      expect(loadFailures).toEqual([]);
      expect(loadAcknowledged).toBeGreaterThan(0);
      // The ten held requests and the load's answers, each stored.
      expect(acknowledged.size).toBe(10 + loadAcknowledged);
      for (const id of acknowledged) expect(stored.has(id)).toBe(true);
      expectConsistent(db);
    } finally {
      db.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
