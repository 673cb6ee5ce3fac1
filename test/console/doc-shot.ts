import type { Page } from "playwright-core";

const DOCS = new URL("../../docs/", import.meta.url);

/** A screenshot for the docs, written only when asked (UPDATE_DOCS=1), so a test run leaves the checkout as it was. */
export async function docShot(page: Page, name: string, fullPage = false): Promise<void> {
  if (process.env.UPDATE_DOCS === "1") await page.screenshot({ path: new URL(name, DOCS).pathname, fullPage });
}
