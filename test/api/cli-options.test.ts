import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it, vi } from "vitest";
import { ConfigError, loadConfig } from "../../src/config.js";
import { TEST_SECRETS } from "../hardening/support.js";
import { aiagent } from "../helpers/cli.js";
import { aiagentCommand } from "../helpers/command.js";
import { scaled } from "../helpers/time-scale.js";

// Each case runs the real command (a second or two each).
vi.setConfig({ testTimeout: scaled(120_000) });

const dir = mkdtempSync(join(tmpdir(), "aiagent-options-"));
const db = join(dir, "options.db");
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("aiagent serve checks its options like the environment, before anything starts", () => {
  it("refuses a bad --port, --host or --db with the option's name, exit 2, and never listens", async () => {
    const cases: [string[], string][] = [
      [["--port", "abc"], '--port must be a port number from 0 to 65535 (0: any free port) (got "abc")'],
      [["--port", "70000"], '--port must be a port number from 0 to 65535 (0: any free port) (got "70000")'],
      [["--port=-1"], '(got "-1")'],
      [["--port="], '--port must be a port number from 0 to 65535 (0: any free port) (got "")'],
      [["--host", "shop example"], '--host must be an IP address or a host name (got "shop example")'],
      [["--db="], '--db must be a file path (got "")'],
      [["--email", "x@example.com"], "--email is not an option of 'serve'"],
    ];
    for (const [args, message] of cases) {
      const r = await aiagent(["serve", ...args, ...(args[0]!.startsWith("--db") ? [] : ["--db", db])]);
      expect(r.code, args.join(" ")).toBe(2);
      expect(r.stderr).toContain(message);
      expect(r.stdout).not.toContain("listening");
    }
  });

  it("a bad environment variable exits 1 naming the variable", async () => {
    const r = await aiagent(["serve", "--db", db], { AIAGENT_PORT: "abc" });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('AIAGENT_PORT must be a port number from 0 to 65535 (0: any free port) (got "abc")');
    const refresh = await aiagent(["keys", "rotate", "--db", db], { AIAGENT_SIGNING_KEY_REFRESH: "0" });
    expect(refresh.code).toBe(1);
    expect(refresh.stderr).toContain("AIAGENT_SIGNING_KEY_REFRESH must be a whole number of seconds from 1 to 3600");
  });

  it("other commands refuse options they do not take instead of ignoring them", async () => {
    const r = await aiagent(["keys", "rotate", "--port", "8080", "--db", db]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("--port is not an option of 'keys rotate'");
    const grace = await aiagent(["api-key", "create", "--email", "x@example.com", "--grace", "60", "--db", db]);
    expect(grace.code).toBe(2);
    expect(grace.stderr).toContain("--grace is not an option of 'api-key create'");
  });

  it("good options are used: serve --port 0 --host 127.0.0.1 listens there and stops cleanly", async () => {
    const child = spawn(
      process.execPath,
      [...aiagentCommand(), "serve", "--port", "0", "--host", "127.0.0.1", "--db", db],
      {
        env: {
          ...process.env,
          AIAGENT_DB: "",
          NODE_ENV: "production",
          AIAGENT_SECRETS: TEST_SECRETS,
          AIAGENT_LOG_LEVEL: "info",
        },
      },
    );
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let out = "";
        child.stdout.on("data", (d: Buffer) => {
          out += d.toString();
          const m = /"url":"(http:\/\/127\.0\.0\.1:\d+)"/.exec(out);
          if (m) resolve(m[1]!);
        });
        child.on("exit", (code) => reject(new Error(`serve exited ${code}: ${out}`)));
      });
      expect((await fetch(`${url}/healthz`)).status).toBe(200);
    } finally {
      const exited = new Promise<number | null>((resolve) => child.on("exit", resolve));
      child.kill("SIGTERM");
      expect(await exited).toBe(0);
    }
  });
});

describe("the settings' rules are one set, for variables and options alike", () => {
  it("an option's error names the option; a variable's names the variable", () => {
    const caught = (fn: () => unknown) => {
      try {
        fn();
      } catch (e) {
        if (e instanceof ConfigError) return e;
        throw e;
      }
      throw new Error("accepted");
    };
    const flag = caught(() => loadConfig({}, {}, { AIAGENT_PORT: { flag: "--port", value: "8o8o" } }));
    expect(flag.flag).toBe("--port");
    expect(flag.message).toBe('--port must be a port number from 0 to 65535 (0: any free port) (got "8o8o")');
    const env = caught(() => loadConfig({ AIAGENT_PORT: "8o8o" }));
    expect(env.flag).toBeUndefined();
    expect(env.message).toContain("AIAGENT_PORT");
    expect(caught(() => loadConfig({ AIAGENT_HOST: "exa mple" })).message).toContain("AIAGENT_HOST must be an IP");
    expect(loadConfig({}, {}, { AIAGENT_PORT: { flag: "--port", value: "9090" } }).port).toBe(9090);
    expect(loadConfig({ AIAGENT_HOST: "::1" }).host).toBe("::1");
    expect(loadConfig({}).apiKeyGraceSeconds).toBe(86_400);
    expect(loadConfig({ AIAGENT_API_KEY_GRACE: "0" }).apiKeyGraceSeconds).toBe(0);
  });
});
