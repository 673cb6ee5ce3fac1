import type { AccountCaller } from "../caller.js";
import { invalidArgument } from "../errors.js";
import { AI_AGENT } from "./rules.js";

/** The inbox's views: whose conversations a contact list shows. */
export const VIEWS = ["all", "mine", "unassigned"] as const;

/**
 * The assignee a view lists (lower case, as the stores compare it), or null for every one. "unassigned" is a
 * conversation no person holds: the AI agent answers it.
 */
export function viewAssignee(caller: AccountCaller, view: string): string | null {
  const v = view === "" ? "all" : view;
  if (!(VIEWS as readonly string[]).includes(v)) throw invalidArgument("view", `must be one of ${VIEWS.join(", ")}`);
  if (v === "mine") return caller.email.toLowerCase();
  if (v === "unassigned") return AI_AGENT;
  return null;
}
