import { beforeAll, describe, expect, test } from "vitest";
import { newContext } from "../frame/browser.js";
import { consoleForFile } from "../helpers/browser-fixtures.js";
import { addMember, idToken } from "../helpers/flows.js";
import { postJson, requestJson } from "../helpers/http.js";
import { suiteCanRun } from "../helpers/system-packages.js";
import { scaled } from "../helpers/time-scale.js";
import { signIn } from "./sign-in.js";

// Issue 27 in the console: a person removed while their inbox is open is signed out by the live stream's end (not
// at some later click), and an invitation refused at acceptance says why on the invitation page.

const canRun = suiteCanRun(import.meta.filename, ["chromium"]);

describe.runIf(canRun)("the console when a credential dies or an invitation cannot be accepted", () => {
  const fx = consoleForFile();
  let admin: string;

  beforeAll(async () => {
    admin = await idToken(fx.s.url, fx.owner);
  });

  test("a member removed while their inbox is open is sent back to the sign-in page by the live stream", async () => {
    const m = await addMember(fx.s.url, admin, `removed-${Date.now()}@shop.example`);
    const context = await newContext(fx.browser);
    const page = await context.newPage();
    const watching = page.waitForResponse((r) => r.url().includes("WatchAccount") || r.url().includes("watch_account"));
    await signIn(page, fx.s.url, m.email, m.password);
    await watching;
    const removed = await requestJson(fx.s.url, "DELETE", `/v1/account/members/${m.memberId}`, {
      authorization: `Bearer ${admin}`,
    });
    expect(removed.status).toBe(200);
    // Nothing is clicked: the stream's end (unauthenticated, within a second) signs the console out.
    await page.getByRole("heading", { name: "Sign in to the console" }).waitFor({ timeout: scaled(5000) });
    await context.close();
  });

  test("an invitation for an e-mail that signs in to another account says so on the invitation page", async () => {
    const m = await addMember(fx.s.url, admin, `taken-${Date.now()}@shop.example`);
    const other = await fx.s.account();
    const inv = await postJson(
      fx.s.url,
      "/v1/account/members",
      { email: m.email, role: "operator" },
      { authorization: `Bearer ${await idToken(fx.s.url, other)}` },
    );
    expect(inv.status).toBe(200);
    const context = await newContext(fx.browser);
    const page = await context.newPage();
    await page.goto(inv.body.data.invitation_url);
    await page.getByLabel("New password").fill("another fine password");
    await page.getByLabel("The same password again").fill("another fine password");
    await page.getByRole("button", { name: "Accept the invitation" }).click();
    await page.getByText(`${m.email} already signs in to another account`).waitFor();
    expect(await page.getByRole("heading", { name: "Join the team" }).count()).toBe(1);
    await context.close();
  });
});
