/** A role in an account: admins may do everything, operators run the inbox. */
export type Role = "admin" | "operator";

/** The frame's caller: one customer of one account talking to one chatbot. */
export interface FrameCaller {
  kind: "frame";
  accountId: string;
  chatbotId: string;
  userId: string;
}

/**
 * Every property of T, its optional ones included (as `undefined` when absent): the type of an object written out
 * property by property instead of spread (V8 adds the properties after a spread on its slow path), so that a property
 * added to T is one more line there rather than one silently dropped.
 */
export type EveryProperty<T> = { [K in keyof Required<T>]: T[K] };

/** The account API's caller: a person or server of the account. */
export interface AccountCaller {
  kind: "account";
  accountId: string;
  /** Who is calling: the member's e-mail, or the account's own (its owner, and servers signing in by API key). */
  email: string;
  /** The account's own e-mail (the documented `user_email_id`), whoever of its people is calling. */
  accountEmail: string;
  role: Role;
  /** The member's id; the account's id for the owner. */
  memberId: string;
  /** Where the call came from, for the audit log; absent for the command line. */
  origin?: CallOrigin | undefined;
  /**
   * The chatbots whose conversations this person does not see: those given to teams they are not in (an operator
   * only; absent or empty: every chatbot). Read when the call is authenticated.
   */
  hiddenChatbots?: readonly string[] | undefined;
}

/** Whether the caller sees the conversations of the chatbot (teams.ts decides what is hidden). */
export function seesChatbot(caller: Pick<AccountCaller, "hiddenChatbots">, chatbotId: string): boolean {
  return caller.hiddenChatbots === undefined || !caller.hiddenChatbots.includes(chatbotId);
}

/** Where a call came from: the client's address and User-Agent ("" when none). */
export interface CallOrigin {
  address: string;
  userAgent: string;
}

/** Whoever reads a conversation. */
export type Caller = FrameCaller | AccountCaller;

/** True when `role` may do what `needed` may. */
export function roleAllows(role: Role, needed: Role): boolean {
  return role === "admin" || needed === "operator";
}
