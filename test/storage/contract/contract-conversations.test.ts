import { attachmentCases } from "./attachments.case.js";
import { contactCases } from "./contacts.case.js";
import { conversationCases } from "./conversations.case.js";
import { runContract } from "./suite.js";

// The storage contract, part of it (see suite.ts): conversations, contacts, the files sent with messages.
await runContract([conversationCases, contactCases, attachmentCases]);
