import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../src/config.js";

// docs/configuration.md against src/config.ts (issue 47, item 4): every variable the configuration reads has a row in
// the page's "Allowed values" table, and each row's default, bounds and refusal are what loadConfig really does.
const page = readFileSync("docs/configuration.md", "utf8");
const source = readFileSync("src/config.ts", "utf8");
const variables = [...new Set(source.match(/AIAGENT_[A-Z0-9_]*[A-Z0-9]/g))].sort();

/** The cells of the Markdown table that follows `heading`, by row. */
function table(heading: string): string[][] {
  const at = page.indexOf(heading);
  expect(at, `docs/configuration.md has "${heading}"`).toBeGreaterThanOrEqual(0);
  const lines = page.slice(at).split("\n");
  const start = lines.findIndex((l) => l.startsWith("|"));
  const rows: string[][] = [];
  for (const l of lines.slice(start + 2)) {
    if (!l.startsWith("|")) break;
    rows.push(
      l
        .slice(1, -1)
        .split(" | ")
        .map((c) => c.trim()),
    );
  }
  return rows;
}

const codes = (cell: string) => [...cell.matchAll(/`([^`]*)`/g)].map((m) => m[1]!);
interface Row {
  variable: string;
  default: string;
  allowed: string;
  refused: string;
}
const rows: Row[] = table("### Allowed values").map(([v, d, a, r]) => ({
  variable: codes(v!)[0]!,
  default: d!,
  allowed: a!,
  refused: r!,
}));
const byName = new Map(rows.map((r) => [r.variable, r]));

/** A relay, its sender and link base: the mail settings are read only with a relay configured. */
const RELAY = {
  AIAGENT_SMTP_URL: "smtp://relay.example:587",
  AIAGENT_MAIL_FROM: "Support <support@example.com>",
  AIAGENT_MAIL_LINK_BASE: "https://chat.example",
};
const needsRelay = (variable: string) => /^AIAGENT_(MAIL_|SMTP_ALLOW_PRIVATE$)/.test(variable);

/** The configuration as JSON (what is compared), or the ConfigError's message; a mail setting alone has a relay. */
function parse(env: Record<string, string>): string {
  const withRelay = Object.keys(env).length === 1 && needsRelay(Object.keys(env)[0]!);
  try {
    return JSON.stringify(loadConfig(withRelay ? { ...RELAY, ...env } : env));
  } catch (e) {
    if (e instanceof ConfigError) return `ConfigError: ${e.message}`;
    throw e;
  }
}
const defaults = parse({});

/** The literal default of a row (undefined when unset or another variable's). */
function literalDefault(r: Row): string | undefined {
  const c = codes(r.default);
  return c.length === 1 && !r.default.startsWith("same as") ? c[0] : undefined;
}

/** A bound of a row's "A to B": a number, or the default of the variable it names. */
function bound(text: string): number {
  if (/^AIAGENT_/.test(text)) return Number(literalDefault(byName.get(text)!));
  return Number(text);
}

describe("docs/configuration.md states every setting of src/config.ts as it behaves", () => {
  it("has one row per variable src/config.ts reads, and none it does not", () => {
    expect(variables.length).toBeGreaterThan(50);
    expect(rows.map((r) => r.variable).sort()).toEqual(variables);
  });

  it("states each default: setting the variable to it changes nothing", () => {
    for (const r of rows) {
      const d = literalDefault(r);
      if (r.default === "unset") expect(parse({}), r.variable).not.toMatch(/^ConfigError/);
      else if (d === undefined) expect(r.default, r.variable).toMatch(/^same as `AIAGENT_[A-Z_]+`$/);
      else
        expect(parse({ [r.variable]: d }), `${r.variable}=${d}`).toBe(
          needsRelay(r.variable) ? JSON.stringify(loadConfig(RELAY)) : defaults,
        );
    }
  });

  it("states each range and choice: its bounds are taken, one past them is refused naming the variable", () => {
    let ranged = 0;
    for (const r of rows) {
      const range = /^`?(\S+?)`? to `?(\S+?)`?$/.exec(r.allowed);
      const choices = r.allowed.startsWith("`") ? codes(r.allowed) : [];
      const refusedNaming = (value: string) => {
        const got = parse({ [r.variable]: value });
        expect(got, `${r.variable}=${value}`).toMatch(new RegExp(`^ConfigError: ${r.variable}\\b`));
      };
      if (range) {
        ranged++;
        const [lo, hi] = [bound(range[1]!), bound(range[2]!)];
        for (const v of [lo, hi])
          expect(parse({ [r.variable]: String(v) }), `${r.variable}=${v}`).not.toMatch(/^Config/);
        refusedNaming(String(lo - 1));
        refusedNaming(String(hi + 1));
      } else if (choices.length) {
        for (const v of choices) expect(parse({ [r.variable]: v }), `${r.variable}=${v}`).not.toMatch(/^Config/);
      }
    }
    expect(ranged).toBeGreaterThan(40);
  });

  it("states what a value outside them gets: the start stops with the message shown", () => {
    for (const r of rows) {
      if (r.refused === "not checked") {
        expect(parse({ [r.variable]: "anything" }), r.variable).not.toMatch(/^ConfigError/);
        continue;
      }
      const [value, message] = codes(r.refused) as [string, string];
      const got = parse({ [r.variable]: value });
      expect(got, `${r.variable}=${value}`).toMatch(/^ConfigError: /);
      expect(got, `${r.variable}=${value}`).toContain(message);
    }
  });

  it("agrees with the page's first table wherever it lists defaults one per variable", () => {
    let compared = 0;
    for (const [v, d] of table("## Configuration")) {
      const names = codes(v!).filter((n) => /^AIAGENT_[A-Z0-9_]+$/.test(n));
      const values = codes(d!);
      if (names.length === 0 || names.length !== values.length) continue;
      names.forEach((n, i) => {
        const row = byName.get(n);
        expect(row, `${n} is in the Allowed values table`).toBeDefined();
        if (literalDefault(row!) !== undefined) {
          expect(values[i], `${n}'s default in the first table`).toBe(literalDefault(row!));
          compared++;
        }
      });
    }
    expect(compared).toBeGreaterThan(30);
  });
});
