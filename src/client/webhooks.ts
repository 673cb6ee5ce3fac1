/**
 * Verification of the service's webhook deliveries on your server (Standard Webhooks: HMAC-SHA256 over
 * `{webhook-id}.{webhook-timestamp}.{body}` with the endpoint's `whsec_` secret). node:crypto only.
 */
import { createHmac, timingSafeEqual } from "node:crypto";

/** How far a delivery's timestamp may be from now before it is refused (replays), in seconds. */
export const WEBHOOK_TOLERANCE_SECONDS = 300;

/** A delivery that does not verify: a wrong or missing signature, a stale timestamp, or a body that changed. */
export class WebhookVerificationError extends Error {
  override readonly name = "WebhookVerificationError";
}

/** True for a WebhookVerificationError. */
export function isWebhookVerificationError(e: unknown): e is WebhookVerificationError {
  return e instanceof WebhookVerificationError;
}

/** An event of the account's log, as a delivery carries it (the same JSON as GET /v1/account/events). */
export interface WebhookEvent {
  event_id: string;
  cursor: string;
  type: string;
  created_at: string;
  account_id: string;
  data: Record<string, unknown>;
}

/** The Standard Webhooks signature of a delivery: `v1,` and the base64 HMAC-SHA256 of `id.timestamp.body`. */
export function signWebhook(secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.startsWith("whsec_") ? secret.slice(6) : secret, "base64");
  return `v1,${createHmac("sha256", key).update(`${id}.${timestamp}.${body}`).digest("base64")}`;
}

/**
 * Checks a delivery and answers its event. `body` must be the raw body exactly as received (not re-serialised
 * JSON); `headers` are the request's (any case; a Headers object works). Throws WebhookVerificationError.
 */
export function verifyWebhook(
  secret: string,
  headers: Headers | Record<string, string | string[] | undefined>,
  body: string | Buffer,
  o: { now?: number; toleranceSeconds?: number } = {},
): WebhookEvent {
  const header = (name: string): string => {
    const v =
      headers instanceof Headers
        ? headers.get(name)
        : (Object.entries(headers).find(([k]) => k.toLowerCase() === name)?.[1] ?? null);
    const s = Array.isArray(v) ? v[0] : v;
    if (!s) throw new WebhookVerificationError(`missing ${name} header`);
    return s;
  };
  const id = header("webhook-id");
  const timestamp = Number(header("webhook-timestamp"));
  const signatures = header("webhook-signature");
  if (!Number.isInteger(timestamp)) throw new WebhookVerificationError("webhook-timestamp is not a number");
  const now = Math.floor((o.now ?? Date.now()) / 1000);
  const tolerance = o.toleranceSeconds ?? WEBHOOK_TOLERANCE_SECONDS;
  if (Math.abs(now - timestamp) > tolerance)
    throw new WebhookVerificationError("webhook-timestamp is too far from now");
  const text = typeof body === "string" ? body : body.toString("utf8");
  const expected = Buffer.from(signWebhook(secret, id, timestamp, text));
  // Several signatures may be sent (space-separated, e.g. during a secret rotation): one valid one is enough.
  const ok = signatures.split(" ").some((s) => {
    const given = Buffer.from(s);
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
  if (!ok) throw new WebhookVerificationError("no valid signature");
  return JSON.parse(text) as WebhookEvent;
}
