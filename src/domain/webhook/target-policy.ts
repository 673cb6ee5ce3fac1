import { BlockList, isIP } from "node:net";
import { invalidArgument } from "../errors.js";
import { MAX_SHORT_TEXT } from "../validate.js";

/** Longest endpoint URL accepted. */
const MAX_URL = 2048;
const LOOPBACK_NAMES = new Set(["localhost", "127.0.0.1", "[::1]"]);

// Addresses a webhook may not reach outside development: this host, the private networks and the cloud metadata
// services behind them, and everything that is not a unicast Internet address.
const blocked = new BlockList();
for (const [net, bits] of [
  ["0.0.0.0", 8],
  ["10.0.0.0", 8],
  ["100.64.0.0", 10],
  ["127.0.0.0", 8],
  ["169.254.0.0", 16],
  ["172.16.0.0", 12],
  ["192.0.0.0", 24],
  ["192.0.2.0", 24],
  ["192.168.0.0", 16],
  ["198.18.0.0", 15],
  ["198.51.100.0", 24],
  ["203.0.113.0", 24],
  ["224.0.0.0", 4],
  ["240.0.0.0", 4],
] as const)
  blocked.addSubnet(net, bits, "ipv4");
for (const [net, bits] of [
  ["::", 128],
  ["::1", 128],
  ["100::", 64],
  ["2001:db8::", 32],
  ["fc00::", 7],
  ["fe80::", 10],
  ["ff00::", 8],
] as const)
  blocked.addSubnet(net, bits, "ipv6");

/** True for a unicast address on the public Internet (IPv4-mapped IPv6 judged by its IPv4 address). */
export function isPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return false;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return isPublicAddress(mapped[1]!);
  // The same in hex, as URLs normalise it: ::ffff:c0a8:1 is 192.168.0.1.
  const hex = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(address);
  if (hex) {
    const [hi, lo] = [Number.parseInt(hex[1]!, 16), Number.parseInt(hex[2]!, 16)];
    return isPublicAddress(`${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`);
  }
  return !blocked.check(address, family === 4 ? "ipv4" : "ipv6");
}

/** Looks a host name up: every address it has. */
export type Resolve = (host: string) => Promise<string[]>;

/** Who may be a webhook target. */
export interface TargetPolicy {
  /** Development: http to loopback, and any address, are allowed. */
  development: boolean;
  resolve: Resolve;
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
    addresses = isIP(host) ? [host] : await policy.resolve(host);
  } catch {
    throw invalidArgument(field, `${host} does not resolve`);
  }
  if (addresses.length === 0) throw invalidArgument(field, `${host} does not resolve`);
  if (!policy.development) {
    const refused = addresses.find((a) => !isPublicAddress(a));
    if (refused !== undefined)
      throw invalidArgument(field, `${host} resolves to ${refused}, a private, loopback or link-local address`);
  }
  return addresses;
}
