import { invalidArgument } from "../errors.js";
import { MAX_SHORT_TEXT } from "../validate.js";

/** Longest endpoint URL accepted. */
const MAX_URL = 2048;
const LOOPBACK_NAMES = new Set(["localhost", "127.0.0.1", "[::1]"]);

/** Looks a host up: every address a name has (an address literal is itself). */
export type Resolve = (host: string) => Promise<string[]>;

/** Who may be a webhook target. */
export interface TargetPolicy {
  /** Development: http to loopback, and any address, are allowed. */
  development: boolean;
  resolve: Resolve;
  /** True for a unicast address on the public Internet (the network adapter knows the address ranges). */
  isPublic(address: string): boolean;
}

/** Checks an endpoint URL's form: https (or http to loopback in development), no credentials or fragment. */
export function requireWebhookUrl(field: string, raw: string, development: boolean): string {
  if (raw.trim() === "") throw invalidArgument(field, "is required");
  if (raw.length > MAX_URL) throw invalidArgument(field, `must be at most ${MAX_URL} characters`);
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw invalidArgument(field, `${JSON.stringify(raw.slice(0, MAX_SHORT_TEXT))} is not an absolute URL`);
  }
  if (u.username || u.password) throw invalidArgument(field, "must not contain a user name or password");
  if (u.hash) throw invalidArgument(field, "must not have a fragment");
  const loopbackHttp = development && u.protocol === "http:" && LOOPBACK_NAMES.has(u.hostname);
  if (u.protocol !== "https:" && !loopbackHttp)
    throw invalidArgument(field, development ? "must be an https URL (or http on localhost)" : "must be an https URL");
  return u.toString();
}

/**
 * The addresses a delivery to `url` may connect to: all of the host's, each public outside development; throws
 * `invalid_argument` naming the field otherwise. Checked when the endpoint is saved and again at every connection
 * (a name may resolve elsewhere later).
 */
export async function checkTarget(field: string, url: string, policy: TargetPolicy): Promise<string[]> {
  const host = new URL(url).hostname.replace(/^\[|\]$/g, "");
  let addresses: string[];
  try {
    addresses = await policy.resolve(host);
  } catch {
    throw invalidArgument(field, `${host} does not resolve`);
  }
  if (addresses.length === 0) throw invalidArgument(field, `${host} does not resolve`);
  if (!policy.development) {
    const refused = addresses.find((a) => !policy.isPublic(a));
    if (refused !== undefined)
      throw invalidArgument(field, `${host} resolves to ${refused}, a private, loopback or link-local address`);
  }
  return addresses;
}
