import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import type { Frame, Page } from "playwright-core";

const axeSource = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

/**
 * The serious and critical axe-core violations of the page as it is now (with "all", every violation), one line each
 * ("" for none). axe is evaluated through the debugging protocol, which the page's CSP (no inline script) does not
 * govern.
 */
export async function axeViolations(page: Page | Frame, impacts: "serious" | "all" = "serious"): Promise<string[]> {
  await page.evaluate(axeSource);
  return page.evaluate(async (all) => {
    const axe = (window as unknown as { axe: { run(c: Document): Promise<AxeResults> } }).axe;
    const r = await axe.run(document);
    return r.violations
      .filter((v) => all || v.impact === "serious" || v.impact === "critical")
      .map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`);
  }, impacts === "all");
}

interface AxeResults {
  violations: { id: string; impact: string | null; nodes: { target: string[] }[] }[];
}
