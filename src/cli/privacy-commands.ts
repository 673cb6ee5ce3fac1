import { create } from "@bufbuild/protobuf";
import { ContactExportSchema } from "../../gen/aiagent/v1/privacy_pb.js";
import type { AccountCaller } from "../domain/caller.js";
import { toDocumentedJson } from "../protocol/rest/json-codec.js";
import { exportedContact } from "../protocol/services/privacy-handlers.js";
import { required, UsageError, type Values } from "./args.js";
import { type Command, type CommandDeps, withApp } from "./commands.js";

/** The account's owner as the caller: the command line acts for the account (and is audited as its owner). */
async function owner(app: CommandDeps, email: string): Promise<AccountCaller> {
  const a = await app.accounts.account(email);
  return {
    kind: "account",
    accountId: a.accountId,
    email: a.email,
    accountEmail: a.email,
    role: "admin",
    memberId: a.accountId,
  };
}

/** --contact-id or --user-id, exactly one. */
function contactRef(values: Values): { contactId: string; userId: string } {
  const contactId = values["contact-id"] ?? "";
  const userId = values["user-id"] ?? "";
  if ((contactId === "") === (userId === "")) throw new UsageError("give --contact-id or --user-id (one of them)");
  return { contactId, userId };
}

/** A command about one customer: the options checked first, then `fn` with the owner as the caller. */
function forContact(
  values: Values,
  fn: (app: CommandDeps, caller: AccountCaller, ref: { contactId: string; userId: string }) => Promise<void>,
): Promise<void> {
  const email = required(values, "email");
  const ref = contactRef(values);
  return withApp(values, async (app) => fn(app, await owner(app, email), ref));
}

/** Erasure, export and retention of customers' data. */
export const PRIVACY_COMMANDS: Record<string, Command> = {
  "contact export": {
    options: ["email", "contact-id", "user-id"],
    run: (values, out) =>
      forContact(values, async (app, caller, ref) => {
        const doc = await app.privacy.export(caller, ref);
        const json = toDocumentedJson(ContactExportSchema, create(ContactExportSchema, exportedContact(doc)));
        out(json, JSON.stringify(json, null, 2));
      }),
  },
  "contact erase": {
    options: ["email", "contact-id", "user-id"],
    run: (values, out) =>
      forContact(values, async (app, caller, ref) => {
        const r = await app.privacy.erase(caller, ref);
        out(
          { contact_id: r.contactId, conversations: r.conversations, messages: r.messages, sessions: r.sessions },
          `contact ${r.contactId} erased: ${r.conversations} conversation(s), ${r.messages} message(s), ` +
            `${r.sessions} session(s)`,
        );
      }),
  },
  "retention set": {
    options: ["email", "chatbot-id", "days"],
    run: (values, out) => {
      const email = required(values, "email");
      const chatbotId = required(values, "chatbot-id");
      const raw = required(values, "days");
      if (!/^\d{1,5}$/.test(raw)) throw new UsageError("--days must be a whole number of days");
      return withApp(values, async (app) => {
        const days = await app.privacy.setRetention(await owner(app, email), chatbotId, Number(raw));
        out(
          { chatbot_id: chatbotId, days },
          days === 0 ? "conversations are kept" : `conversations idle for ${days} day(s) are deleted`,
        );
      });
    },
  },
  "retention run": {
    options: [],
    run: (values, out) => {
      return withApp(values, async (app) => {
        await app.retention.runOnce();
        out({ done: true }, "retention periods applied");
      });
    },
  },
};
