import { lookup } from "node:dns/promises";
import type { Resolve } from "../domain/webhook/target-policy.js";

/** Every address the system resolver gives for a host name. */
export const resolveAll: Resolve = async (host) => (await lookup(host, { all: true })).map((a) => a.address);
