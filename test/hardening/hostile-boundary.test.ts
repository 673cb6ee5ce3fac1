import { connect as http2Connect } from "node:http2";
import { afterAll, beforeAll, expect, it } from "vitest";
import { invalidArgument } from "../../src/domain/errors.js";
import { startServer, type TestServer } from "../helpers/server.js";

// The one request boundary (src/protocol/http/boundary.ts): whatever a route throws or rejects with becomes a typed
// error answer, and the process goes on serving. Routes that fail on purpose stand in for a handler's bug.

let s: TestServer;
beforeAll(async () => {
  s = await startServer({
    overrides: {
      extraRoutes: () => [
        {
          name: "throws",
          verbs: ["GET"],
          path: "/test/throws",
          serve: () => {
            throw new Error("a bug in a handler");
          },
        },
        {
          name: "rejects",
          verbs: ["GET"],
          path: "/test/rejects",
          serve: () => Promise.reject(new Error("a bug after an await")),
        },
        {
          name: "bad input",
          verbs: ["GET"],
          path: "/test/bad-input",
          serve: () => {
            throw invalidArgument("widget_id", "must be a widget");
          },
        },
      ],
    },
  });
});
afterAll(() => s.close(true));

async function answer(path: string): Promise<{ status: number; body: { code: string; message: string } }> {
  const r = await fetch(`${s.url}${path}`, { signal: AbortSignal.timeout(10_000) });
  return { status: r.status, body: (await r.json()) as { code: string; message: string } };
}

it("a throw and a rejected promise while handling: 500 internal with a request id that the log line carries", async () => {
  for (const path of ["/test/throws", "/test/rejects"]) {
    const r = await answer(path);
    expect(r.status).toBe(500);
    expect(r.body.code).toBe("internal");
    const id = /request id ([0-9a-f-]{36})/.exec(r.body.message)?.[1];
    expect(id, r.body.message).toBeDefined();
    const line = s.logs.find((l) => l.includes(id!));
    expect(line).toBeDefined();
    expect(JSON.parse(line!)).toMatchObject({ level: "error", request_id: id, path });
    // The cause is in the log, never in the answer.
    expect(r.body.message).not.toContain("bug");
  }
  expect((await fetch(`${s.url}/healthz`)).status).toBe(200);
});

it("a throw that says the input was at fault: 400 invalid_argument naming the parameter", async () => {
  const r = await answer("/test/bad-input");
  expect(r.status).toBe(400);
  expect(r.body).toMatchObject({ code: "invalid_argument", message: "widget_id: must be a widget" });
});

it("over HTTP/2 too: the failing stream gets its 500, the connection and the server go on", async () => {
  const session = http2Connect(s.url);
  const get = (path: string) =>
    new Promise<number>((resolvePromise, reject) => {
      const req = session.request({ ":path": path });
      req.on("response", (h) => resolvePromise(Number(h[":status"])));
      req.on("error", reject);
      req.resume();
      req.end();
    });
  expect(await get("/test/throws")).toBe(500);
  expect(await get("/test/rejects")).toBe(500);
  expect(await get("/healthz")).toBe(200);
  session.close();
});
