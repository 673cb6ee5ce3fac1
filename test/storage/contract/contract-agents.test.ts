import { agentCases } from "./agents.case.js";
import { runContract } from "./suite.js";

// The storage contract, part of it (see suite.ts): agent tools, settings, daily usage and handovers.
await runContract([agentCases]);
