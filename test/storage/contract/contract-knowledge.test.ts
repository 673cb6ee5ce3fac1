import { knowledgeCases } from "./knowledge.case.js";
import { runContract } from "./suite.js";

// The storage contract, part of it (see suite.ts): knowledge sources and their passages.
await runContract([knowledgeCases]);
