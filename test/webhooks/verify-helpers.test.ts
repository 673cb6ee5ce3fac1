import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isWebhookVerificationError, signWebhook, verifyWebhook } from "../../src/client/index.js";
import { idToken, issueTokens, send } from "../helpers/flows.js";
import { postJson } from "../helpers/http.js";
import { startServer, type TestServer } from "../helpers/server.js";
import { eventually, type Received, WebhookReceiver } from "../helpers/webhook-receiver.js";

const python = spawnSync("python3", ["--version"]).status === 0;
if (!python) console.warn("the Python webhook helper's test skipped: install python3");

let s: TestServer;
const receiver = new WebhookReceiver();
let secret: string;
let delivery: Received;
const dir = mkdtempSync(join(tmpdir(), "aiagent-hook-helpers-"));

beforeAll(async () => {
  s = await startServer({ env: { AIAGENT_WEBHOOK_POLL_MS: "20" } });
  await receiver.up();
  const a = await s.account();
  const token = await idToken(s.url, a);
  const ep = await postJson(
    s.url,
    "/v1/account/webhooks",
    { url: receiver.url, event_types: ["message.created"] },
    { authorization: `Bearer ${token}` },
  );
  secret = ep.body.data.secret;
  await send(s.url, (await issueTokens(s.url, a, "helper-customer")).access_token, "Grüße, ünïcode ✓");
  await eventually("a delivery", () => receiver.accepted().length >= 1);
  delivery = receiver.received[0]!;
});
afterAll(async () => {
  await receiver.down();
  await s.close(true);
  rmSync(dir, { recursive: true, force: true });
});

describe("the TypeScript helper (aiagent/client)", () => {
  it("verifies a real delivery and answers its event", () => {
    const event = verifyWebhook(secret, delivery.headers as Record<string, string>, delivery.body);
    expect(event.type).toBe("message.created");
    expect((event.data.message as { content: string }).content).toBe("Grüße, ünïcode ✓");
  });

  it("refuses a changed body, another secret, a stale timestamp and a missing header", () => {
    const h = delivery.headers as Record<string, string>;
    const refused = (f: () => unknown) => {
      try {
        f();
      } catch (e) {
        return isWebhookVerificationError(e);
      }
      return false;
    };
    expect(refused(() => verifyWebhook(secret, h, delivery.body.replace("Grüße", "Grüsse")))).toBe(true);
    expect(refused(() => verifyWebhook(`whsec_${Buffer.alloc(32, 7).toString("base64")}`, h, delivery.body))).toBe(
      true,
    );
    expect(refused(() => verifyWebhook(secret, h, delivery.body, { now: Date.now() + 3600_000 }))).toBe(true);
    expect(refused(() => verifyWebhook(secret, { ...h, "webhook-signature": "" }, delivery.body))).toBe(true);
  });

  it("signs as the service does", () => {
    const h = delivery.headers as Record<string, string>;
    expect(signWebhook(secret, h["webhook-id"]!, Number(h["webhook-timestamp"]), delivery.body)).toBe(
      h["webhook-signature"],
    );
  });
});

describe.skipIf(!python)("the Python helper (examples/webhooks/verify.py, hmac only)", () => {
  const run = (file: string) =>
    spawnSync("python3", ["examples/webhooks/verify.py", secret, file], { encoding: "utf8" });

  it("verifies a real delivery", () => {
    const file = join(dir, "delivery.json");
    writeFileSync(file, JSON.stringify({ headers: delivery.headers, body: delivery.body }));
    const r = run(file);
    expect(r.stdout, r.stderr).toMatch(/^valid: message\.created /);
    expect(r.status).toBe(0);
  });

  it("refuses a tampered body", () => {
    const file = join(dir, "tampered.json");
    writeFileSync(file, JSON.stringify({ headers: delivery.headers, body: delivery.body.replace("✓", "✗") }));
    const r = run(file);
    expect(r.stdout).toMatch(/^invalid: no valid signature/);
    expect(r.status).toBe(1);
  });

  it("compiles, receiver included", () => {
    // Compiled into the test's directory: nothing is written into the checkout.
    const code = `import py_compile\nfor f in ["verify.py", "receiver.py"]: py_compile.compile("examples/webhooks/" + f, cfile="${dir}/" + f + "c", doraise=True)`;
    execFileSync("python3", ["-c", code]);
  });
});
