import { execFile } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { scaled } from "../helpers/time-scale.js";

const run = promisify(execFile);
const root = resolve(".");
// The very command `npm test` runs (package.json "check:breaking"), run in a copy of the workspace.
const command = (JSON.parse(readFileSync("package.json", "utf8")).scripts["check:breaking"] as string).split(/\s+/);
const TOKEN_PROTO = "proto/aiagent/v1/token_service.proto";
const CONVERSATION_PROTO = "proto/aiagent/v1/conversation_service.proto";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A copy of the contract workspace (buf.yaml, proto/ with the released image, the google protos) to edit. */
function workspace(): string {
  const dir = mkdtempSync(join(tmpdir(), "aiagent-breaking-"));
  dirs.push(dir);
  cpSync("proto", join(dir, "proto"), { recursive: true });
  cpSync("buf.yaml", join(dir, "buf.yaml"));
  mkdirSync(join(dir, "node_modules"));
  symlinkSync(join(root, "node_modules/google-proto-files"), join(dir, "node_modules/google-proto-files"));
  return dir;
}

function edit(dir: string, file: string, from: string, to: string): void {
  const path = join(dir, file);
  const text = readFileSync(path, "utf8");
  expect(text).toContain(from);
  writeFileSync(path, text.replace(from, to));
}

async function breaking(dir: string): Promise<{ code: number; output: string }> {
  const [bin, ...args] = command;
  expect(bin).toBe("buf");
  try {
    const r = await run(join(root, "node_modules/.bin/buf"), args, { cwd: dir, timeout: scaled(30_000) });
    return { code: 0, output: r.stdout + r.stderr };
  } catch (e) {
    const err = e as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof err.code === "number" ? err.code : -1, output: `${err.stdout ?? ""}${err.stderr ?? ""}` };
  }
}

describe("buf breaking against the released contract (npm run check:breaking)", () => {
  it("passes for the contract as it is", async () => {
    const r = await breaking(workspace());
    expect(r, r.output).toMatchObject({ code: 0 });
  });

  it("fails when a field is renamed, naming the field", async () => {
    const dir = workspace();
    edit(dir, TOKEN_PROTO, "string contact_name = 1 [", "string display_name = 1 [");
    const r = await breaking(dir);
    expect(r.code).not.toBe(0);
    expect(r.output).toContain('on message "ContactProfile" changed name from "contact_name" to "display_name"');
  });

  it("fails when a documented response field is removed", async () => {
    const dir = workspace();
    edit(
      dir,
      CONVERSATION_PROTO,
      "  // True when a further page exists.\n  bool has_more = 2;\n}\n\n// Contact",
      "}\n\n// Contact",
    );
    const r = await breaking(dir);
    expect(r.code).not.toBe(0);
    expect(r.output).toMatch(/Previously present field "2" with name "has_more" on message "ContactPage" was deleted/);
  });

  it("lets the contract grow: a new field passes", async () => {
    const dir = workspace();
    edit(
      dir,
      TOKEN_PROTO,
      "  string phone_number = 3 [(aiagent.v1.text) = {max_length: 256, format: TEXT_FORMAT_LINE}];\n}",
      "  string phone_number = 3 [(aiagent.v1.text) = {max_length: 256, format: TEXT_FORMAT_LINE}];\n  // The customer's preferred language.\n  string language = 4 [(aiagent.v1.text) = {max_length: 35}];\n}",
    );
    const r = await breaking(dir);
    expect(r, r.output).toMatchObject({ code: 0 });
  });
});
