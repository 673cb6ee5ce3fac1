import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../src/config.js";
import { smtpTransport } from "../../src/mail/smtp.js";
import { freePort, startSmtpSink } from "./smtp-sink.js";

const base = { AIAGENT_DB: ":memory:", AIAGENT_MAIL_FROM: "Support <support@example.com>" };
const mail = { to: "ann@example.com", subject: "s", text: "t", html: "<p>t</p>", headers: {} };

describe("the e-mail settings", () => {
  it("are off without a relay, and checked with one (the relay's password never echoed)", () => {
    expect(loadConfig({ AIAGENT_DB: ":memory:" }).mail).toBeUndefined();
    const bad = () => loadConfig({ ...base, AIAGENT_SMTP_URL: "http://mailer:hunter2-secret@smtp.example.com" });
    expect(bad).toThrow(ConfigError);
    expect(bad).toThrow(/^AIAGENT_SMTP_URL must be/);
    try {
      bad();
    } catch (e) {
      expect((e as Error).message).not.toContain("hunter2");
    }
    expect(() => loadConfig({ AIAGENT_DB: ":memory:", AIAGENT_SMTP_URL: "smtp://smtp.example.com" })).toThrow(
      /AIAGENT_MAIL_FROM/,
    );
    expect(() => loadConfig({ ...base, AIAGENT_SMTP_URL: "smtp://smtp.example.com" })).toThrow(
      /AIAGENT_MAIL_LINK_BASE/,
    );
    const c = loadConfig({
      ...base,
      AIAGENT_SMTP_URL: "smtps://u:p@smtp.example.com",
      AIAGENT_BASE_URL: "https://chat.example.com/",
      NODE_ENV: "production",
      AIAGENT_SECRETS: "x".repeat(40),
    }).mail!;
    expect(c).toMatchObject({
      linkBase: "https://chat.example.com",
      offlineMs: 120_000,
      allowPrivate: false,
      transcriptsPerHour: 3,
    });
    expect(c.retryDelaysMs).toEqual([30_000, 120_000, 600_000, 1_800_000, 7_200_000, 21_600_000]);
    expect(() =>
      loadConfig({
        ...base,
        AIAGENT_SMTP_URL: "smtp://h",
        AIAGENT_BASE_URL: "https://c",
        AIAGENT_MAIL_RETRY_DELAYS: "x",
      }),
    ).toThrow(/AIAGENT_MAIL_RETRY_DELAYS/);
  });
});

describe("the relay through the SSRF guard", () => {
  const settings = (url: string, allowPrivate: boolean) => ({
    smtpUrl: url,
    from: "support@example.com",
    linkBase: "https://chat.example.com",
    offlineMs: 1000,
    linkTtlMs: 60_000,
    retryDelaysMs: [],
    timeoutMs: 5000,
    allowPrivate,
    transcriptsPerHour: 3,
  });

  it("refuses a loopback or private relay unless the operator allowed it", async () => {
    const sink = await startSmtpSink();
    try {
      await expect(smtpTransport(settings(`smtp://127.0.0.1:${sink.port}`, false)).send(mail)).rejects.toThrow(
        /not a public address.*AIAGENT_SMTP_ALLOW_PRIVATE/,
      );
      await expect(smtpTransport(settings(`smtp://localhost:${sink.port}`, false)).send(mail)).rejects.toThrow(
        /non-public address/,
      );
      await expect(smtpTransport(settings("smtp://10.1.2.3:25", false)).send(mail)).rejects.toThrow(/not a public/);
      expect(sink.received).toHaveLength(0);
      await smtpTransport(settings(`smtp://127.0.0.1:${sink.port}`, true)).send(mail);
      expect(sink.received).toHaveLength(1);
    } finally {
      await sink.close();
    }
  });

  it("bounds an attempt in time and refuses an oversized message", async () => {
    // A listener that never greets: the attempt ends at the time-out with a reason.
    const { createServer } = await import("node:net");
    const port = await freePort();
    const silent = createServer(() => undefined);
    await new Promise<void>((r) => silent.listen(port, "127.0.0.1", r));
    try {
      const s = { ...settings(`smtp://127.0.0.1:${port}`, true), timeoutMs: 300 };
      await expect(smtpTransport(s).send(mail)).rejects.toThrow(/could not be reached|did not answer/);
      await expect(smtpTransport(s).send({ ...mail, text: "x".repeat(600 * 1024) })).rejects.toThrow(/larger than/);
    } finally {
      await new Promise((r) => silent.close(r));
    }
  });
});
