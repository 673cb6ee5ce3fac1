import { afterAll, afterEach, beforeEach, describe } from "vitest";
import { accountCases } from "./accounts.case.js";
import { agentCases } from "./agents.case.js";
import { contactCases } from "./contacts.case.js";
import { conversationCases } from "./conversations.case.js";
import { eventCases } from "./events.case.js";
import { backends, type Harness } from "./harness.js";
import { idempotencyCases } from "./idempotency.case.js";
import { invitationCases } from "./invitations.case.js";
import { logAdvanceCases } from "./log-advances.case.js";
import { memberCases } from "./members.case.js";
import { privacyCases } from "./privacy.case.js";
import { profileCases } from "./profiles.case.js";
import { ratingCases } from "./ratings.case.js";
import { reportCases } from "./reports.case.js";
import { sessionCases } from "./sessions.case.js";
import { teamCases } from "./team.case.js";
import { tokenCases } from "./tokens.case.js";
import { transactionCases } from "./transactions.case.js";

// One suite, every back end: each case gets a fresh, empty store.
for (const backend of backends) {
  const skip = await backend.skipReason();
  if (skip) console.warn(`storage contract on ${backend.name} skipped: ${skip}`);
  describe.skipIf(skip !== undefined)(`storage contract: ${backend.name}`, () => {
    afterAll(async () => {
      await backend.teardown?.();
    });
    let harness: Harness | undefined;
    beforeEach(async () => {
      harness = await backend.open();
    });
    afterEach(async () => {
      await harness?.close();
      harness = undefined;
    });
    const h = () => harness!;
    accountCases(h);
    memberCases(h);
    invitationCases(h);
    profileCases(h);
    ratingCases(h);
    reportCases(h);
    teamCases(h);
    tokenCases(h);
    sessionCases(h);
    conversationCases(h);
    contactCases(h);
    transactionCases(h);
    eventCases(h);
    logAdvanceCases(h);
    idempotencyCases(h);
    privacyCases(h);
    agentCases(h);
  });
}
