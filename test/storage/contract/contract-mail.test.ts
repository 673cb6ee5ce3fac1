import { mailCases } from "./mail.case.js";
import { runContract } from "./suite.js";

// The storage contract, part of it (see suite.ts): the e-mail outbox.
await runContract([mailCases]);
