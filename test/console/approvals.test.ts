import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { AWAITING_APPROVAL } from "../../src/agents/openai-compatible.js";
import { type LlmStandIn, scripted, startLlmStandIn } from "../frame/llm-stand-in.js";
import { consoleAndFrameForFile } from "../helpers/browser-fixtures.js";
import { idToken } from "../helpers/flows.js";
import { requestJson } from "../helpers/http.js";
import { suiteCanRun } from "../helpers/system-packages.js";
import { ToolServer } from "../helpers/tool-server.js";
import { adminOpensLatest, customerWrites } from "./sign-in.js";

// A call that needs approval, in the console: the conversation shows the waiting call (its tool and arguments, to the
// team only) with Approve and Refuse; approved, the agent's answer reaches the customer's frame, and the console
// shows the call folded under the reply.

const canRun = suiteCanRun(import.meta.filename, ["chromium"]);
let llm: LlmStandIn;
const tools = new ToolServer();
// Before the fixture's own beforeAll (hooks run in order): the service is started pointing at the stand-in.
beforeAll(async () => {
  if (!canRun) return;
  llm = await startLlmStandIn();
  await tools.start();
});
const fx = consoleAndFrameForFile(canRun, () => ({
  AIAGENT_LLM_BASE_URL: llm.url,
  AIAGENT_LLM_MODEL: "stand-in-model",
}));
afterAll(async () => {
  await tools.close();
  await llm?.close();
});

describe.runIf(canRun)("approving a tool call in the console", () => {
  test("the operator sees the waiting call, approves it, and the answer reaches the customer", async () => {
    const auth = { authorization: `Bearer ${await idToken(fx.e.service.url, fx.e.account)}` };
    const made = await requestJson(
      fx.e.service.url,
      "POST",
      `/v1/account/chatbots/${fx.e.account.chatbotId}/tools`,
      auth,
      {
        name: "refund_order",
        description: "Refunds an order.",
        parameters: JSON.stringify({ type: "object", properties: { order_id: { type: "string" } } }),
        url: tools.url("/refund"),
        requires_approval: true,
      },
    );
    expect(made.status).toBe(200);
    tools.secret = made.body.data.secret;
    llm.behave(scripted([{ toolCalls: [{ id: "c1", name: "refund_order", arguments: '{"order_id":"A-77"}' }] }]));

    const { context: customer, frame } = await customerWrites(fx.browser, fx.e.host.url, "Please refund order A-77");
    await frame.locator(".msg--assistant", { hasText: AWAITING_APPROVAL }).waitFor();
    expect(await frame.locator("#log").textContent()).not.toContain("refund_order");

    const { context, page } = await adminOpensLatest(fx);
    const waiting = page.getByTestId("approval");
    await waiting.waitFor();
    expect(await waiting.textContent()).toContain("refund_order");
    expect(await waiting.locator(".approval__arguments").textContent()).toContain('"order_id": "A-77"');

    llm.behave(scripted([{ text: ["Order A-77 is refunded."] }]));
    await waiting.getByRole("button", { name: "Approve" }).click();
    await waiting.waitFor({ state: "detached" });
    expect(tools.calls.map((c) => c.call.arguments)).toEqual([{ order_id: "A-77" }]);

    // The answer reaches the customer live, and the console shows the decided call under it.
    await frame.locator(".msg--assistant", { hasText: "Order A-77 is refunded." }).waitFor();
    const reply = page.locator(".message--assistant", { hasText: "Order A-77 is refunded." });
    await reply.waitFor();
    await reply.getByText("Tool calls").click();
    expect(await reply.locator(".message__tools pre").textContent()).toContain('"status": "succeeded"');
    await context.close();
    await customer.close();
  });
});
