import { connect as h2connect } from "node:http2";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startServer, type TestServer } from "../helpers/server.js";

// README: 100 streams per HTTP/2 connection. The server says so in its SETTINGS (a conforming client, gRPC's
// included, never opens more at once), and serves that many at once on one connection.
let s: TestServer;
beforeAll(async () => {
  s = await startServer();
});
afterAll(() => s.close(true));

it("an HTTP/2 connection is allowed 100 concurrent streams, and 100 held open at once are each served", async () => {
  const session = h2connect(s.url);
  try {
    await new Promise<void>((resolve) => session.once("remoteSettings", () => resolve()));
    expect(session.remoteSettings.maxConcurrentStreams).toBe(100);
    // 100 requests whose bodies are held back: all open at once, each started on the server (100-continue).
    const streams = Array.from({ length: 100 }, () =>
      session.request({
        ":method": "POST",
        ":path": "/ai_agent/get_access_token",
        "content-type": "application/json",
        expect: "100-continue",
      }),
    );
    await Promise.all(streams.map((st) => new Promise<void>((resolve) => st.once("continue", () => resolve()))));
    const statuses = streams.map(
      (st) =>
        new Promise<number>((resolve) => {
          st.once("response", (h) => resolve(Number(h[":status"])));
          st.resume();
        }),
    );
    for (const st of streams) st.end("{}");
    // Each was read and answered (a missing field: 400), none refused or reset.
    expect(await Promise.all(statuses)).toEqual(new Array(100).fill(400));
  } finally {
    session.close();
  }
});
