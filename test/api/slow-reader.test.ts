import { connect, Socket } from "node:net";
import { describe, expect, test } from "vitest";
import { serverForFile } from "../helpers/file-server.js";
import { idToken, issueTokens, send } from "../helpers/flows.js";
import { postJson } from "../helpers/http.js";
import { openNdjson } from "../helpers/ndjson.js";
import { startServer } from "../helpers/server.js";
import { scaled } from "../helpers/time-scale.js";

// Backpressure (issue 44): a client that takes nothing is written to through a bounded buffer; when it stays behind
// longer than AIAGENT_STREAM_STALL_MS its stream ends with the cursor to resume from, and the other streams of the
// same account keep receiving on time. A raw socket is the stalled client: it sends its request and never reads.

const fx = serverForFile({
  server: { env: { AIAGENT_STREAM_BUFFER_BYTES: "16384", AIAGENT_STREAM_STALL_MS: "1000" } },
  idTokens: true,
});

/** Waits for a condition, polling (no fixed sleep); fails after `ms`. */
async function until(check: () => boolean, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`not within ${ms} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

function stalledClient(path: string, token: string, url = fx.s.url): Promise<Socket> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port) }, () => {
      socket.write(`GET ${path} HTTP/1.1\r\nHost: ${hostname}\r\nAuthorization: Bearer ${token}\r\n\r\n`);
      socket.pause();
      resolve(socket);
    });
    socket.once("error", reject);
  });
}

/** Counts the reads of the account's event log (the store's repository, wrapped where the instance holds it). */
function countLogReads(accountId: string): { reads: number; restore: () => void } {
  const events = fx.s.app.store.events;
  const list = events.list;
  const counted = { reads: 0, restore: () => void (events.list = list) };
  events.list = (account, ...rest) => {
    if (account === accountId) counted.reads++;
    return list.call(events, account, ...rest);
  };
  return counted;
}

describe("a slow reader cannot hold the others back, nor hold memory without bound", () => {
  test(
    "the stalled stream ends with its resume cursor; the account's other streams receive every reply, on shared reads of the log",
    async () => {
      const t = await issueTokens(fx.s.url, fx.a, "slow-reader");
      const conv = await send(fx.s.url, t.access_token, "hello");
      const path = `/watch_account?${new URLSearchParams({ user_email_id: fx.a.email })}`;
      const before = fx.s.app.watchLimits.open;
      const stalled = await stalledClient(path, fx.idA);
      await until(() => fx.s.app.watchLimits.open === before + 1, 10_000, "the stalled stream is open");
      const onTime = await openNdjson(`${fx.s.url}${path}`, { authorization: `Bearer ${fx.idA}` });
      expect((await onTime.next())?.result?.subscribed_at).toBeDefined();
      // More streams of the account, kept current: another inbox and the customer's own frame.
      const inbox = await openNdjson(`${fx.s.url}${path}`, { authorization: `Bearer ${fx.idA}` });
      expect((await inbox.next())?.result?.subscribed_at).toBeDefined();
      const frame = await openNdjson(
        `${fx.s.url}/watch_conversation?${new URLSearchParams({ conversation_id: conv.conversation_id, access_token: t.access_token })}`,
      );
      expect((await frame.next())?.result?.conversation).toBeDefined();
      await until(() => fx.s.app.watchLimits.open === before + 4, 10_000, "the four streams are open");
      const counted = countLogReads(fx.a.accountId);

      // Replies of 7,900 characters, until the stalled stream is let go (the kernel's buffers fill first).
      const body = "x".repeat(7900);
      let sent = 0;
      for (; sent < 2000 && fx.s.app.watchLimits.open === before + 4; sent++) {
        const r = await postJson(
          fx.s.url,
          "/reply_to_conversation",
          { conversation_id: conv.conversation_id, content: `${sent} ${body}` },
          { authorization: `Bearer ${fx.idA}` },
        );
        expect(r.status).toBe(200);
        // The other stream receives each reply as it is written: the stalled one delays nobody.
        for (const other of [onTime, inbox, frame]) {
          let got: string | undefined;
          while (!got?.startsWith(`${sent} `)) got = (await other.next())?.result?.message?.content;
        }
      }
      await until(() => fx.s.app.watchLimits.open === before + 3, 15_000, "the stalled stream is let go");

      // What the stalled client finds when it reads at last: messages, then the end naming where to resume.
      const text = await new Promise<string>((resolve) => {
        let got = "";
        stalled.on("data", (d: Buffer) => {
          got += d.toString("latin1");
        });
        stalled.once("end", () => resolve(got));
        stalled.once("close", () => resolve(got));
        stalled.resume();
      });
      const lines = dechunk(text)
        .split("\n")
        .filter((l) => l.startsWith('{"'));
      const last = JSON.parse(lines.at(-1)!) as { error?: { code: string; cursor: string; message: string } };
      expect(last.error?.code).toBe("resource_exhausted");
      const cursors = lines.slice(0, -1).map((l) => (JSON.parse(l) as { result: { cursor: string } }).result.cursor);
      expect(last.error?.cursor).toBe(cursors.at(-1));
      expect(last.error?.message).toContain(`after_cursor=${cursors.at(-1)}`);
      // Fewer replies reached it than were written: it was cut, not fed without bound.
      expect(lines.length - 2).toBeLessThan(sent);
      // One shared read of the log per reply (and a page more now and then), not one per stream: four streams
      // reading for themselves would cost four or more per reply.
      counted.restore();
      expect(counted.reads).toBeLessThan(2 * sent);
      for (const other of [onTime, inbox, frame]) await other.cancel();
      // Filling the kernel's socket buffers takes a few hundred writes on a loaded machine.
    },
    scaled(180_000),
  );
});

describe("a reader that falls behind and catches up", () => {
  test(
    "keeps its stream: once it reads again, every reply arrives once, in order, and the stream goes on",
    async () => {
      // The stall limit long (the reader is slow, not gone): the stream must resume when the socket drains, not be let go.
      const s = await startServer({
        env: { AIAGENT_STREAM_BUFFER_BYTES: "16384", AIAGENT_STREAM_STALL_MS: String(scaled(60_000)) },
      });
      try {
        const a = await s.account();
        const id = await idToken(s.url, a);
        const t = await issueTokens(s.url, a, "slow-but-there");
        const conv = await send(s.url, t.access_token, "hello");
        const path = `/watch_account?${new URLSearchParams({ user_email_id: a.email })}`;
        const reader = await stalledClient(path, id, s.url);
        // The service's end of the reader's connection (the server runs in this process): what it has not sent yet.
        const handles = () => (process as unknown as { _getActiveHandles(): unknown[] })._getActiveHandles();
        let served: Socket | undefined;
        await until(
          () =>
            (served = handles().find((h): h is Socket => h instanceof Socket && h.remotePort === reader.localPort)) !==
            undefined,
          10_000,
          "the service's socket",
        );
        // Subscribed: its first line (subscribed_at) is written before anything of the log.
        await until(() => served!.bytesWritten > 0, 10_000, "the stream's first line");
        // Replies until the kernel's buffers are full and the service holds more than its bound for this stream: from
        // there it waits for the socket to drain.
        const body = "y".repeat(7900);
        let sent = 0;
        for (; sent < 3000 && served!.writableLength <= 16384; sent++) {
          const r = await postJson(
            s.url,
            "/reply_to_conversation",
            { conversation_id: conv.conversation_id, content: `${sent} ${body}` },
            { authorization: `Bearer ${id}` },
          );
          expect(r.status).toBe(200);
        }
        expect(served!.writableLength).toBeGreaterThan(16384);

        // The reader reads again; one more reply after it.
        let got = "";
        reader.on("data", (d: Buffer) => {
          got += d.toString("latin1");
        });
        reader.resume();
        const last = await postJson(
          s.url,
          "/reply_to_conversation",
          { conversation_id: conv.conversation_id, content: "the last one" },
          { authorization: `Bearer ${id}` },
        );
        expect(last.status).toBe(200);
        await until(() => dechunk(got).includes("the last one"), scaled(30_000), "the reply after the catch-up");
        const lines = dechunk(got)
          .split("\n")
          .filter((l) => l.startsWith('{"'))
          .map((l) => JSON.parse(l) as { result?: { message?: { content?: string } }; error?: unknown });
        expect(lines.some((l) => l.error !== undefined)).toBe(false);
        const replies = lines
          .map((l) => l.result?.message?.content)
          .filter((c): c is string => c?.endsWith(body) === true)
          .map((c) => Number(c.split(" ")[0]));
        expect(replies).toEqual(Array.from({ length: sent }, (_, i) => i));
        reader.destroy();
      } finally {
        await s.close(true);
      }
    },
    scaled(180_000),
  );
});

/** The body of a raw HTTP/1.1 response sent with chunked transfer encoding. */
function dechunk(raw: string): string {
  let at = raw.indexOf("\r\n\r\n") + 4;
  let out = "";
  for (;;) {
    const eol = raw.indexOf("\r\n", at);
    if (eol < 0) return out;
    const size = Number.parseInt(raw.slice(at, eol), 16);
    if (!size) return out;
    out += raw.slice(eol + 2, eol + 2 + size);
    at = eol + 2 + size + 2;
  }
}
