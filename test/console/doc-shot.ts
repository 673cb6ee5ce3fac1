import type { Locator, Page } from "playwright-core";

const DOCS = new URL("../../docs/", import.meta.url);

/**
 * A screenshot for the docs (of the page, or of one element), written only when asked (UPDATE_DOCS=1), so a test run
 * leaves the checkout as it was.
 */
export async function docShot(target: Page | Locator, name: string, fullPage = false): Promise<void> {
  if (process.env.UPDATE_DOCS !== "1") return;
  const path = new URL(name, DOCS).pathname;
  await ("goto" in target ? target.screenshot({ path, fullPage }) : target.screenshot({ path }));
}
