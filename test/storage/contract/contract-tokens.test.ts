import { privacyCases } from "./privacy.case.js";
import { sessionCases } from "./sessions.case.js";
import { runContract } from "./suite.js";
import { tokenCases } from "./tokens.case.js";

// The storage contract, part of it (see suite.ts): tokens, sessions, privacy.
await runContract([tokenCases, sessionCases, privacyCases]);
