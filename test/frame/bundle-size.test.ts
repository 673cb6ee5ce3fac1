import { gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { frameScript } from "../../src/frame/bundle.js";

// The frame loads inside every customer's page: its script stays small (docs/inbox.md states its size before and
// after each change). The budget is what a customer downloads: the minified bundle, gzipped.
const BUDGET_GZIPPED = 9 * 1024;

describe("the frame's script", () => {
  it(`is at most ${BUDGET_GZIPPED} bytes gzipped`, async () => {
    const js = Buffer.from(await frameScript());
    expect(gzipSync(js, { level: 9 }).length).toBeLessThanOrEqual(BUDGET_GZIPPED);
  });
});
