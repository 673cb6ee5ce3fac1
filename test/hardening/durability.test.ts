import { spawnSync } from "node:child_process";
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { idToken, issueTokens, send } from "../helpers/flows.js";
import { getJson, postJson } from "../helpers/http.js";
import { sqliteDb } from "../helpers/sqlite.js";
import { durabilityFixture, expectConsistent, holdExclusiveLock } from "./durability-fixture.js";
import { dbChecksum, expectNoSecrets } from "./support.js";

// Durability under a locked or a full database (start-up and SIGTERM: durability-*.test.ts, run in parallel).
const { secrets, servers, server, account } = durabilityFixture();

describe("a database locked by another process", () => {
  it("writes answer 503 unavailable with Retry-After after the busy timeout, reads go on, and writes succeed once the lock is gone", async () => {
    const s = await server({ AIAGENT_BUSY_TIMEOUT_MS: "300" });
    const a = await account(s);
    const t = await issueTokens(s.url, a, "locked-user");
    const id = await idToken(s.url, a);
    secrets.add(t.access_token).add(t.refresh_token).add(id);
    const conv = (await send(s.url, t.access_token, "before the lock")).conversation_id;

    const lock = await holdExclusiveLock(s.dbPath);
    const before = dbChecksum(sqliteDb(s.app));
    for (const write of [
      () =>
        postJson(s.url, `/ai_agent/send_message?access_token=${t.access_token}`, {
          conversation_id: conv,
          content: "during the lock",
        }),
      () =>
        postJson(s.url, "/ai_agent/get_access_token", {
          user_id: "new-user",
          chatbot_id: a.chatbotId,
          client_api_key: a.apiKey,
        }),
      () =>
        postJson(
          s.url,
          "/reply_to_conversation",
          { conversation_id: conv, content: "operator" },
          { authorization: `Bearer ${id}` },
        ),
    ]) {
      // It answers rather than hangs (the test's own timeout is the bound: no speed claim here).
      const r = await write();
      expect(r.status).toBe(503);
      expect(r.body.code).toBe("unavailable");
      expect(Number(r.headers.get("retry-after"))).toBeGreaterThan(0);
    }
    // WAL readers do not wait for the writer's lock.
    expect(
      (await getJson(s.url, "/get_messages_for_conversation", { conversation_id: conv, access_token: t.access_token }))
        .status,
    ).toBe(200);
    await lock.release();
    expect(dbChecksum(sqliteDb(s.app))).toBe(before);
    const after = await send(s.url, t.access_token, "after the lock", conv);
    expect(after.user_message.message_order).toBe(3);
  });
});

describe("a full database", () => {
  it("writes answer 503 and leave no partial rows; once there is room again the service goes on (max_page_count)", async () => {
    const s = await server();
    const a = await account(s);
    const t = await issueTokens(s.url, a, "full-user");
    const id = await idToken(s.url, a);
    secrets.add(t.access_token).add(t.refresh_token).add(id);
    const conv = (await send(s.url, t.access_token, "first")).conversation_id;
    const pages = sqliteDb(s.app).pragma("page_count", { simple: true }) as number;
    sqliteDb(s.app).pragma(`max_page_count = ${pages}`);
    let status = 200;
    for (let i = 0; i < 2000 && status === 200; i++) {
      status = (
        await postJson(
          s.url,
          "/reply_to_conversation",
          { conversation_id: conv, content: `filler ${i} ${"x".repeat(2000)}` },
          { authorization: `Bearer ${id}` },
        )
      ).status;
    }
    expect(status).toBe(503);
    const before = dbChecksum(sqliteDb(s.app));
    // Each needs new pages (overflow pages for long content): none fits in what is left.
    const refused = [
      await postJson(
        s.url,
        "/reply_to_conversation",
        { conversation_id: conv, content: "y".repeat(7000) },
        { authorization: `Bearer ${id}` },
      ),
      await postJson(s.url, `/ai_agent/send_message?access_token=${t.access_token}`, {
        conversation_id: conv,
        content: "w".repeat(7000),
      }),
    ];
    for (const r of refused) {
      expect(r.status).toBe(503);
      expect(r.body.code).toBe("unavailable");
      expect(r.headers.get("retry-after")).not.toBeNull();
    }
    expect(dbChecksum(sqliteDb(s.app))).toBe(before);
    expect((await getJson(s.url, "/readyz")).status).toBe(200);
    sqliteDb(s.app).pragma("max_page_count = 1073741823");
    expect((await send(s.url, t.access_token, "room again", conv)).user_message.content).toBe("room again");
    expectConsistent(sqliteDb(s.app));
  });

  /** Why the real full-disk test cannot run here, or undefined when it can. */
  const cannotMount = ((): string | undefined => {
    if (process.platform !== "linux") return `not Linux (${process.platform})`;
    if (process.getuid?.() !== 0) return "not running as root";
    const probe = mkdtempSync(join(tmpdir(), "aiagent-mount-probe-"));
    const ok = spawnSync("mount", ["-t", "tmpfs", "-o", "size=64k", "tmpfs", probe]).status === 0;
    if (ok) spawnSync("umount", [probe]);
    rmSync(probe, { recursive: true, force: true });
    return ok ? undefined : "mount -t tmpfs was refused (a container without CAP_SYS_ADMIN?)";
  })();
  const canMount = cannotMount === undefined;
  // A skip says why, in one line of the test output.
  if (cannotMount)
    console.warn(`durability.test.ts: skipping the real full-disk (tmpfs) test: ${cannotMount}; max_page_count ran`);

  // Needs root and mount (true here and in CI containers run as root); the max_page_count test above always runs.
  it.skipIf(!canMount)(
    "on a real full disk (a 2 MiB tmpfs): 503, no partial rows, and recovery when space returns",
    async () => {
      const dir = mkdtempSync(join(tmpdir(), "aiagent-full-"));
      expect(spawnSync("mount", ["-t", "tmpfs", "-o", "size=2m", "tmpfs", dir]).status).toBe(0);
      try {
        const s = await server({}, dir);
        const a = await account(s);
        const t = await issueTokens(s.url, a, "disk-user");
        secrets.add(t.access_token).add(t.refresh_token);
        const conv = (await send(s.url, t.access_token, "first")).conversation_id;
        // Fill the disk with another file.
        const filler = join(dir, "filler");
        const fd = openSync(filler, "w");
        const block = Buffer.alloc(64 * 1024, 1);
        try {
          for (let i = 0; i < 64; i++) writeSync(fd, block);
        } catch (e) {
          expect((e as NodeJS.ErrnoException).code).toBe("ENOSPC");
        }
        try {
          writeSync(fd, Buffer.alloc(4096, 1));
        } catch {
          /* full to the last block */
        }
        closeSync(fd);
        let status = 200;
        for (let i = 0; i < 500 && status === 200; i++)
          status = (
            await postJson(s.url, `/ai_agent/send_message?access_token=${t.access_token}`, {
              conversation_id: conv,
              content: `m${i} ${"z".repeat(3000)}`,
            })
          ).status;
        expect(status).toBe(503);
        expectConsistent(sqliteDb(s.app));
        rmSync(filler);
        const again = await send(s.url, t.access_token, "space again", conv);
        expect(again.user_message.content).toBe("space again");
        expectConsistent(sqliteDb(s.app));
        await s.close();
        servers.splice(servers.indexOf(s), 1);
        expectNoSecrets(s.logs, secrets);
      } finally {
        spawnSync("umount", ["-l", dir]);
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );
});
