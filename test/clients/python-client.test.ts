import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { issueTokens, send } from "../helpers/flows.js";
import { getJson } from "../helpers/http.js";
import { startServer, type TestAccount, type TestServer } from "../helpers/server.js";
import { grpcPython, protocPath, suiteCanRun } from "../helpers/system-packages.js";
import { scaled } from "../helpers/time-scale.js";

// A real Python gRPC client, generated with Debian's tools, against a live server. Without those tools the suite is
// skipped with one line naming the packages (`npm test` installs them when it can; CI always does).
const run = promisify(execFile);
const canRun = suiteCanRun(import.meta.filename, [
  "protobuf-compiler",
  "protobuf-compiler-grpc",
  "python3-grpcio",
  "python3-protobuf",
]);

let s: TestServer;
let a: TestAccount;
let conversationId: string;
let stubs: string;
const USER = "python-user";

beforeAll(async () => {
  s = await startServer();
  a = await s.account();
  const t = await issueTokens(s.url, a, USER);
  conversationId = (await send(s.url, t.access_token, "Hello from Python's customer")).conversation_id;
  stubs = mkdtempSync(join(tmpdir(), "aiagent-pystubs-"));
});
afterAll(async () => {
  rmSync(stubs, { recursive: true, force: true });
  await s.close(true);
});

describe.runIf(canRun)("examples/python-client over gRPC", () => {
  it("generates stubs with protoc + grpc_python_plugin and calls GetAccessToken, RefreshToken, GetMessagesForConversation", async () => {
    const python = grpcPython()!;
    await run("examples/python-client/generate.sh", [stubs], {
      env: { ...process.env, PROTOC: protocPath()! },
      timeout: scaled(30_000),
    });
    expect(existsSync(join(stubs, "aiagent/v1/token_service_pb2_grpc.py"))).toBe(true);
    expect(existsSync(join(stubs, "aiagent/v1/conversation_service_pb2_grpc.py"))).toBe(true);

    const { stdout } = await run(
      python,
      [
        "examples/python-client/client.py",
        "--stubs",
        stubs,
        "--target",
        new URL(s.url).host,
        "--chatbot-id",
        a.chatbotId,
        "--user-id",
        USER,
        "--conversation-id",
        conversationId,
      ],
      { env: { ...process.env, AIAGENT_CLIENT_API_KEY: a.apiKey }, timeout: scaled(30_000) },
    );
    const out = JSON.parse(stdout);
    expect(out.access_token.split(".")).toHaveLength(3);
    expect(out.access_token_expires_at).toBeGreaterThan(Date.now());
    expect(out.refresh_token_expires_at).toBeGreaterThan(out.access_token_expires_at);
    expect(out.refreshed.expires_at).toBeGreaterThan(Date.now());
    expect(out.messages.map((m: { message_order: number; role: string }) => [m.message_order, m.role])).toEqual([
      [1, "user"],
      [2, "assistant"],
    ]);
    expect(out.messages[0].content).toBe("Hello from Python's customer");
    expect(out.messages[1].content.length).toBeGreaterThan(0);
    expect(out.has_more).toBe(false);
    // Both tokens it printed are real: the JSON route serves the same messages to each.
    for (const token of [out.access_token, out.refreshed.access_token]) {
      const r = await getJson(s.url, "/get_messages_for_conversation", {
        conversation_id: conversationId,
        access_token: token,
      });
      expect(r.status).toBe(200);
      expect(r.body.messages.map((m: { message_id: string }) => m.message_id)).toEqual(
        out.messages.map((m: { message_id: string }) => m.message_id),
      );
    }
    expect(stdout).not.toContain(a.apiKey);
    expect(stdout).not.toMatch(/rt_[A-Za-z0-9_-]{20,}/);
  });
});
