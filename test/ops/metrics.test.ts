import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { issueTokens, send } from "../helpers/flows.js";
import { postJson } from "../helpers/http.js";
import { openNdjson } from "../helpers/ndjson.js";
import { freePort } from "../helpers/ports.js";
import { startServer, type TestAccount, type TestServer } from "../helpers/server.js";
import { prometheusPath, suiteCanRun } from "../helpers/system-packages.js";
import { scaled } from "../helpers/time-scale.js";

const METRICS_TOKEN = "metrics-scrape-secret-0123456789";
let s: TestServer;
let a: TestAccount;

beforeAll(async () => {
  s = await startServer({ env: { AIAGENT_METRICS_TOKEN: METRICS_TOKEN } });
  a = await s.account();
});
afterAll(() => s?.close(true));

const scrape = (auth?: string) =>
  fetch(`${s.url}/metrics`, auth ? { headers: { authorization: auth } } : {}).then(async (r) => ({
    status: r.status,
    type: r.headers.get("content-type"),
    body: await r.text(),
  }));

/** The value of one series in the text format, by its name and exact label set; undefined when absent. */
function sampleOf(text: string, series: string): number | undefined {
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe("GET /metrics", () => {
  it("answers only the bearer secret, and is no route at all without one configured", async () => {
    expect((await scrape()).status).toBe(401);
    expect((await scrape("Bearer wrong-secret-wrong-secret")).status).toBe(401);
    const ok = await scrape(`Bearer ${METRICS_TOKEN}`);
    expect(ok.status).toBe(200);
    expect(ok.type).toContain("text/plain");
    const plain = await startServer();
    try {
      expect((await fetch(`${plain.url}/metrics`)).status).toBe(404);
    } finally {
      await plain.close(true);
    }
  });

  it("counts RPCs per method, protocol and code, tokens issued and refused, without who called", async () => {
    await issueTokens(s.url, a, "metrics-user-1");
    const wrong = await postJson(s.url, "/ai_agent/get_access_token", {
      user_id: "metrics-user-2",
      chatbot_id: a.chatbotId,
      client_api_key: `${a.apiKey}x`,
    });
    expect(wrong.status).toBe(401);
    // The same method over Connect's own protocol.
    const connect = await fetch(`${s.url}/aiagent.v1.TokenService/GetAccessToken`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ userId: "metrics-user-3", chatbotId: a.chatbotId, clientApiKey: a.apiKey }),
    });
    expect(connect.status).toBe(200);
    const { body } = await scrape(`Bearer ${METRICS_TOKEN}`);
    const rpc = 'rpc="TokenService/GetAccessToken"';
    expect(sampleOf(body, `aiagent_rpc_requests_total{${rpc},protocol="json",code="ok"}`)).toBe(1);
    expect(sampleOf(body, `aiagent_rpc_requests_total{${rpc},protocol="json",code="unauthenticated"}`)).toBe(1);
    expect(sampleOf(body, `aiagent_rpc_requests_total{${rpc},protocol="connect",code="ok"}`)).toBe(1);
    expect(sampleOf(body, `aiagent_rpc_duration_seconds_count{${rpc},protocol="json",code="ok"}`)).toBe(1);
    expect(sampleOf(body, 'aiagent_tokens_issued_total{kind="access"}')).toBe(2);
    expect(body).toMatch(/^aiagent_tokens_refused_total\{kind="access",reason="[A-Za-z_]+"\} 1$/m);
    for (const series of [
      "aiagent_webhook_outbox_depth",
      "aiagent_storage_pool_in_use",
      "aiagent_storage_pool_waiting",
      "aiagent_storage_unit_retries_total",
      "aiagent_page_cache_hits_total",
      "aiagent_list_cache_hits_total",
      "nodejs_eventloop_lag_p99_seconds",
      "process_cpu_seconds_total",
    ])
      expect(body).toMatch(new RegExp(`^${series} `, "m"));
    expect(sampleOf(body, "aiagent_storage_stats_up")).toBe(1);
    // Nothing about who called: no account, chatbot, user, key or token in any series.
    for (const secret of [a.accountId, a.chatbotId, a.apiKey, a.email, "metrics-user-1"])
      expect(body).not.toContain(secret);
  });
});

describe("live streams", () => {
  it("are counted while open, by kind, and no longer once the client leaves", async () => {
    const t = await issueTokens(s.url, a, "metrics-watcher");
    const id = (await send(s.url, t.access_token, "hello")).conversation_id;
    const q = new URLSearchParams({ conversation_id: id, access_token: t.access_token });
    const open = async () =>
      sampleOf((await scrape(`Bearer ${METRICS_TOKEN}`)).body, 'aiagent_live_streams{kind="WatchConversation"}');
    const r = await openNdjson(`${s.url}/watch_conversation?${q}`);
    expect((await r.next())?.result).toBeDefined();
    expect(await open()).toBe(1);
    await r.cancel();
    // The server sees the client leave a moment later: bounded wait.
    const deadline = Date.now() + scaled(10_000);
    while ((await open()) !== 0 && Date.now() < deadline) await new Promise((x) => setTimeout(x, 50));
    expect(await open()).toBe(0);
  });
});

describe.runIf(suiteCanRun(import.meta.filename, ["prometheus"]))("a real Prometheus", () => {
  let prom: ChildProcess | undefined;
  let dir: string;
  afterAll(() => {
    prom?.kill("SIGKILL");
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it(
    "scrapes /metrics with the bearer secret and answers a counter back through its HTTP API",
    async () => {
      await issueTokens(s.url, a, "metrics-user-4");
      dir = mkdtempSync(join(tmpdir(), "aiagent-prometheus-"));
      const target = new URL(s.url).host;
      writeFileSync(
        join(dir, "prometheus.yml"),
        `global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: aiagent\n    authorization:\n      credentials: ${METRICS_TOKEN}\n    static_configs:\n      - targets: ["${target}"]\n`,
      );
      const port = await freePort();
      prom = spawn(
        prometheusPath(),
        [
          `--config.file=${join(dir, "prometheus.yml")}`,
          `--storage.tsdb.path=${join(dir, "data")}`,
          `--web.listen-address=127.0.0.1:${port}`,
        ],
        { stdio: "ignore" },
      );
      const query = encodeURIComponent(
        'aiagent_rpc_requests_total{job="aiagent",rpc="TokenService/GetAccessToken",protocol="json",code="ok"}',
      );
      // Bounded: Prometheus starts, scrapes within its 1 s interval, and the sample becomes queryable.
      const deadline = Date.now() + scaled(40_000);
      let value: string | undefined;
      while (value === undefined && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 500));
        const r = await fetch(`http://127.0.0.1:${port}/api/v1/query?query=${query}`).catch(() => undefined);
        if (!r?.ok) continue;
        const j = (await r.json()) as { data: { result: { value: [number, string] }[] } };
        value = j.data.result[0]?.value[1];
      }
      expect(value).toBeDefined();
      expect(Number(value)).toBeGreaterThanOrEqual(1);
    },
    scaled(60_000),
  );
});
