import type { AccountCaller, EveryProperty } from "../domain/caller.js";
import { accountCaller } from "./auth.js";
import type { AuthorizedCall, Call } from "./call.js";

/** Longest User-Agent kept for the audit log. */
const MAX_USER_AGENT = 256;

/** Where a call came from, for the audit log: the peer's address and its User-Agent (clipped). */
export function callOrigin(call: Call): { address: string; userAgent: string } {
  return { address: call.peer, userAgent: (call.header("user-agent") ?? "").slice(0, MAX_USER_AGENT) };
}

/** The account's caller with where the call came from, for the actions the audit log records. */
export function auditedCaller(call: AuthorizedCall): AccountCaller {
  const c = accountCaller(call.auth);
  // Written out, not `{ ...c, origin }`: V8 adds a property after a spread on its slow path (a map migration).
  const out: EveryProperty<AccountCaller> = {
    kind: c.kind,
    accountId: c.accountId,
    email: c.email,
    accountEmail: c.accountEmail,
    role: c.role,
    memberId: c.memberId,
    hiddenChatbots: c.hiddenChatbots,
    origin: callOrigin(call),
  };
  return out;
}
