import { contactCases } from "./contacts.case.js";
import { conversationCases } from "./conversations.case.js";
import { runContract } from "./suite.js";

// The storage contract, part of it (see suite.ts): conversations, contacts.
await runContract([conversationCases, contactCases]);
