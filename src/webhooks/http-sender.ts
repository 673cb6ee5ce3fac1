import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import * as http from "node:http";
import * as https from "node:https";
import type { LookupFunction } from "node:net";
import type { Send, SendResult } from "../domain/webhook/dispatcher.js";
import { isPublicAddress } from "./addresses.js";

/** Longest response body read (the rest is discarded): only the status matters. */
const MAX_RESPONSE_BYTES = 4096;

/**
 * A DNS lookup that refuses private, loopback and link-local answers outside development: the check happens at
 * the connection itself, so a name that resolved to a public address when the endpoint was saved cannot be turned
 * to an internal one later (DNS rebinding).
 */
export function guardedLookup(development: boolean): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, "", 0);
      const list = addresses as LookupAddress[];
      const refused = development ? undefined : list.find((a) => !isPublicAddress(a.address));
      if (refused)
        return callback(
          Object.assign(new Error(`${hostname} resolves to ${refused.address}, a non-public address`), {
            code: "EADDRNOTPUBLIC",
          }),
          "",
          0,
        );
      if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, list);
      const first = list[0]!;
      callback(null, first.address, first.family);
    });
  };
}

/**
 * Sends webhook POSTs with node's HTTP client: no redirects followed (a 3xx is a failed attempt), a time limit on
 * the whole attempt, addresses checked at connection, and a literal address refused like a resolved one.
 */
export function httpSender(o: { development: boolean; timeoutMs: number }): Send {
  const lookup = guardedLookup(o.development);
  return (url, headers, body, signal) =>
    new Promise<SendResult>((resolve) => {
      const u = new URL(url);
      const host = u.hostname.replace(/^\[|\]$/g, "");
      if (!o.development && /^[\d.]+$|:/.test(host) && !isPublicAddress(host)) {
        resolve({ status: 0, error: `${host} is not a public address` });
        return;
      }
      const client = u.protocol === "https:" ? https : http;
      const payload = Buffer.from(body);
      let settled = false;
      const finish = (r: SendResult) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        signal.removeEventListener("abort", onAbort);
        resolve(r);
      };
      const req = client.request(
        url,
        {
          method: "POST",
          headers: { ...headers, "content-length": String(payload.length) },
          lookup,
          agent: false,
        },
        (res) => {
          let read = 0;
          res.on("data", (chunk: Buffer) => {
            read += chunk.length;
            if (read > MAX_RESPONSE_BYTES) res.destroy();
          });
          res.on("close", () => finish({ status: res.statusCode ?? 0, error: "" }));
          res.on("error", () => finish({ status: res.statusCode ?? 0, error: "" }));
        },
      );
      const timer = setTimeout(() => {
        req.destroy();
        finish({ status: 0, error: `no answer within ${o.timeoutMs} ms` });
      }, o.timeoutMs);
      const onAbort = () => {
        req.destroy();
        finish({ status: 0, error: "stopped" });
      };
      signal.addEventListener("abort", onAbort, { once: true });
      req.on("error", (e: NodeJS.ErrnoException) => finish({ status: 0, error: e.code ?? e.message }));
      req.end(payload);
    });
}
