import { lookup } from "node:dns/promises";
import { isIP } from "node:net";
import type { Resolve } from "../domain/webhook/target-policy.js";

/** Every address the system resolver gives for a host name. */
export const resolveAll: Resolve = async (host) => (await lookup(host, { all: true })).map((a) => a.address);

/** A resolver that answers an address literal with itself and asks `names` only for names. */
export function withLiterals(names: Resolve): Resolve {
  return async (host) => (isIP(host) ? [host] : names(host));
}
