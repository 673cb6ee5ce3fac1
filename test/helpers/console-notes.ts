import type { Page } from "playwright-core";
import { expect } from "vitest";

// Internal notes in the console's open conversation, as the console tests write and read them.

/** Opens the first conversation of the list and adds an internal note to it; waits until the note shows. */
export async function addNoteToFirst(page: Page, text: string): Promise<void> {
  await page.locator(".contact").first().click();
  await page.getByLabel("Write an internal note").fill(text);
  await page.getByRole("button", { name: "Add note" }).click();
  await page.getByTestId("note").filter({ hasText: text }).waitFor();
}

/**
 * Waits until a teammate's note shows live in the open conversation, apart from the messages, by its author's name
 * (their display name, or their e-mail's local part when they have none; never the e-mail: issue 45).
 */
export async function seesNoteLive(page: Page, text: string, author: string): Promise<void> {
  const note = page.getByTestId("note").filter({ hasText: text });
  await note.waitFor();
  await expect.poll(() => note.getByTestId("note-author").textContent()).toBe(author);
  expect(await page.locator(".messages").textContent()).not.toContain(text);
}

/**
 * Writes a note in the open conversation mentioning `name`, picked from the menu that typing "@" and two letters
 * opens (the pick fills "@<name> "), and waits until the note says whom it mentions.
 */
export async function addNoteMentioning(page: Page, name: string, text: string): Promise<void> {
  const note = page.getByLabel("Write an internal note");
  await note.fill(`@${name.slice(0, 2)}`);
  await page.getByRole("option", { name: new RegExp(`@${name}`) }).waitFor();
  await note.press("Enter");
  expect(await note.inputValue()).toBe(`@${name} `);
  await note.fill(`@${name} ${text}`);
  await page.getByRole("button", { name: "Add note" }).click();
  await page
    .getByTestId("note-mentions")
    .filter({ hasText: `Mentions: ${name}` })
    .waitFor();
}
