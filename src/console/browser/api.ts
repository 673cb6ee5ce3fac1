import { Code, ConnectError, createClient, type Interceptor } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-web";
import { AccountService } from "../../../gen/aiagent/v1/account_service_pb.js";
import { AgentService } from "../../../gen/aiagent/v1/agent_service_pb.js";
import { ConsoleService } from "../../../gen/aiagent/v1/console_service_pb.js";
import { ConversationService } from "../../../gen/aiagent/v1/conversation_service_pb.js";
import { MailService } from "../../../gen/aiagent/v1/mail_service_pb.js";
import { SessionService } from "../../../gen/aiagent/v1/session_service_pb.js";
import { WebhookService } from "../../../gen/aiagent/v1/webhook_service_pb.js";
import { idempotentWrites } from "./idempotent.js";

/** The header that lets a call ride on the session cookie (only this origin's scripts can send it). */
const CSRF_HEADER = "x-aiagent-csrf";

/** Dispatched on window when a call finds the session gone (expired, signed out elsewhere). */
export const SIGNED_OUT_EVENT = "aiagent:signed-out";

/**
 * Every call says it comes from the console (the ID token travels in the HttpOnly cookie, never in script); a call
 * refused for want of a session sends the whole console back to the sign-in page.
 */
const csrf: Interceptor = (next) => async (req) => {
  req.header.set(CSRF_HEADER, "1");
  try {
    return await next(req);
  } catch (e) {
    // A call with its own credential (the preview user's access token) says nothing about the console's session.
    const ownCredential = req.header.has("authorization");
    if (isSignedOut(e) && req.method.name !== "GetAccount" && !ownCredential)
      dispatchEvent(new Event(SIGNED_OUT_EVENT));
    throw e;
  }
};

const transport = createConnectTransport({
  baseUrl: location.origin,
  interceptors: [csrf, idempotentWrites],
  fetch: (input, init) => fetch(input, { ...init, credentials: "same-origin" }),
});

/** The account API (keys, chatbots, team), through the generated Connect client. */
export const accounts = createClient(AccountService, transport);
/** The console's own session and the embed page's preview token. */
export const consoleSession = createClient(ConsoleService, transport);
/** The customers' sessions: listed, revoked one by one. */
export const sessions = createClient(SessionService, transport);
/** The inbox and the operators' actions, and the live push channel (WatchAccount). */
export const conversations = createClient(ConversationService, transport);

/** The account's webhook endpoints and their deliveries (admins). */
export const webhooks = createClient(WebhookService, transport);

/** The customers' transcripts (operators) and the account's outbox (admins). */
export const mail = createClient(MailService, transport);

/** A chatbot's tools, instructions, handover rules and daily model budget (admins). */
export const agents = createClient(AgentService, transport);

/** A refusal as a person should read it. */
export function describeError(e: unknown): string {
  if (e instanceof ConnectError) {
    if (e.code === Code.Unavailable || e.code === Code.Unknown) return "The service cannot be reached. Try again.";
    return e.rawMessage;
  }
  if (e instanceof Error) return e.message;
  return String(e);
}

/** Whether the error is the service's not-found (no such thing, or another account's: never told apart). */
export function isNotFound(e: unknown): boolean {
  return e instanceof ConnectError && e.code === Code.NotFound;
}

/** Whether the error means the session is gone (signed out, expired). */
export function isSignedOut(e: unknown): boolean {
  return e instanceof ConnectError && e.code === Code.Unauthenticated;
}

/**
 * Opens the session: ConsoleService.SignIn's JSON route trades e-mail and password for the HttpOnly cookie (the
 * token RPC must not set one). Throws with the service's message when refused.
 */
export async function signIn(email: string, password: string): Promise<void> {
  const r = await fetch("/console/session", {
    method: "POST",
    credentials: "same-origin",
    headers: { "content-type": "application/json", [CSRF_HEADER]: "1" },
    body: JSON.stringify({ email, password }),
  });
  if (r.ok) return;
  const body = (await r.json().catch(() => ({}))) as { message?: string };
  throw new Error(body.message ?? `sign-in failed (${r.status})`);
}

/** Clears the session cookie. */
export async function signOut(): Promise<void> {
  await fetch("/console/session", { method: "DELETE", credentials: "same-origin", headers: { [CSRF_HEADER]: "1" } });
}
