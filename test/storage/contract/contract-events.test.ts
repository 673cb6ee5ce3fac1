import { eventCases } from "./events.case.js";
import { idempotencyCases } from "./idempotency.case.js";
import { logAdvanceCases } from "./log-advances.case.js";
import { replyCases } from "./replies.case.js";
import { runContract } from "./suite.js";
import { transactionCases } from "./transactions.case.js";

// The storage contract, part of it (see suite.ts): transactions, events, log-advances, idempotency, agent replies.
await runContract([transactionCases, eventCases, logAdvanceCases, idempotencyCases, replyCases]);
