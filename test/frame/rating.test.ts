import { describe, expect, test } from "vitest";
import { axeViolations } from "../console/axe.js";
import { adminOpensLatest, customerWrites } from "../console/sign-in.js";
import { consoleAndFrameForFile } from "../helpers/browser-fixtures.js";
import { contacts, idToken } from "../helpers/flows.js";
import { postJson } from "../helpers/http.js";
import { suiteCanRun } from "../helpers/system-packages.js";

// Issue 32, item 4: when the team closes a conversation the customer's frame asks how it went; the rating reaches the
// console (the event log and the webhook are in test/api/rating.test.ts).

const canRun = suiteCanRun(import.meta.filename, ["chromium"]);

const fx = consoleAndFrameForFile(canRun);

describe.runIf(canRun)("how did it go?", () => {
  test("the frame asks for a rating when the conversation closes; the console shows it", async () => {
    const {
      context: customer,
      page: shop,
      frame,
    } = await customerWrites(fx.browser, fx.e.host.url, "Can I return an item?");

    const token = await idToken(fx.e.service.url, fx.e.account);
    const auth = { authorization: `Bearer ${token}` };
    const id = (await contacts(fx.e.service.url, token, fx.e.account.email)).body.data.data.contacts[0]
      .latest_conversation_id as string;
    expect((await postJson(fx.e.service.url, "/close_conversation", { conversation_id: id }, auth)).status).toBe(200);

    const prompt = frame.getByRole("group", { name: "How did it go?" });
    await prompt.waitFor();
    expect(await axeViolations(shop)).toEqual([]);
    await prompt.getByLabel("5 · Very good").check();
    await prompt.getByLabel("Comment (optional)").fill("Clear answer, thanks!");
    await prompt.getByRole("button", { name: "Send rating" }).click();
    await frame.getByText("Thank you for your rating (5 of 5).").waitFor();
    await customer.close();

    const { context: operator, page } = await adminOpensLatest(fx);
    const note = page.getByTestId("conversation-rating");
    await note.waitFor();
    expect(await note.textContent()).toBe("Rated 5 of 5 by the customer: “Clear answer, thanks!”");
    await operator.close();
  });
});
