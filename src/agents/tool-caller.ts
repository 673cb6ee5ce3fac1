import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import * as http from "node:http";
import * as https from "node:https";
import { isIP, type LookupFunction } from "node:net";
import type { ToolCallStatus } from "../domain/agent/agent.js";
import { isPublicAddress } from "../webhooks/addresses.js";
import { standardSign } from "../webhooks/signer.js";

/** Largest tool answer read; a longer one fails the call as too_large (the model is told). */
export const MAX_TOOL_ANSWER_BYTES = 16 * 1024;

/** Where and how a tool is called. */
export interface ToolTarget {
  url: string;
  method: "POST" | "GET";
  timeoutMs: number;
  /** The tool's signing secret (opened from its sealed form for this call only). */
  secret: string;
}

/** What a call carries: the tool, its arguments, and who it is for as the service verified it. */
export interface ToolCallEnvelope {
  tool: string;
  call_id: string;
  chatbot_id: string;
  conversation_id: string;
  /** The customer's user_id from the verified access token (never from the model). */
  user_id: string;
  arguments: unknown;
}

/** How a call ended, before the loop records it. */
export interface ToolAnswer {
  status: ToolCallStatus;
  /** The answer's body (succeeded), or what went wrong, for the model. */
  text: string;
}

/** Calls a tool's URL. */
export type CallTool = (target: ToolTarget, envelope: ToolCallEnvelope, signal: AbortSignal) => Promise<ToolAnswer>;

const LOOPBACK = (a: string) =>
  isIP(a) === 4 ? a.startsWith("127.") : a === "::1" || a.toLowerCase() === "::ffff:127.0.0.1";

/** True when a tool may be reached at this address: public ones, and loopback in development only. */
export function toolAddressAllowed(address: string, development: boolean): boolean {
  return isPublicAddress(address) || (development && LOOPBACK(address));
}

/** A DNS lookup refusing the addresses a tool may not be reached at, checked at the connection itself. */
function toolLookup(development: boolean): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, "", 0);
      const list = addresses as LookupAddress[];
      const refused = list.find((a) => !toolAddressAllowed(a.address, development));
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
 * The tool client: each call signed the Standard Webhooks way with the tool's secret (webhook-id is the call's id),
 * sent only to addresses the SSRF guard allows (checked at connection: public ones; loopback too in development),
 * no redirects followed, bounded in time (the tool's timeout) and in the answer's size.
 */
export function httpToolCaller(o: { development: boolean }): CallTool {
  const lookup = toolLookup(o.development);
  return (target, envelope, signal) =>
    new Promise<ToolAnswer>((resolve) => {
      const body = JSON.stringify(envelope);
      const u = new URL(target.url);
      const host = u.hostname.replace(/^\[|\]$/g, "");
      if (isIP(host) !== 0 && !toolAddressAllowed(host, o.development)) {
        resolve({ status: "refused_address", text: `${host} is not a public address; the call was not made` });
        return;
      }
      if (target.method === "GET") u.searchParams.set("call", body);
      const now = Date.now();
      const headers: Record<string, string> = {
        "webhook-id": envelope.call_id,
        "webhook-timestamp": String(Math.floor(now / 1000)),
        "webhook-signature": standardSign(target.secret, envelope.call_id, now, body),
        "user-agent": "aiagent-tools/1",
        accept: "application/json, text/plain",
      };
      if (target.method === "POST") {
        headers["content-type"] = "application/json";
        headers["content-length"] = String(Buffer.byteLength(body));
      }
      let settled = false;
      const finish = (a: ToolAnswer) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        signal.removeEventListener("abort", onAbort);
        req.destroy();
        resolve(a);
      };
      const client = u.protocol === "https:" ? https : http;
      const req = client.request(u, { method: target.method, headers, lookup, agent: false }, (res) => {
        const status = res.statusCode ?? 0;
        const chunks: Buffer[] = [];
        let size = 0;
        res.on("data", (c: Buffer) => {
          size += c.length;
          if (size > MAX_TOOL_ANSWER_BYTES)
            return finish({
              status: "too_large",
              text: `the tool's answer was larger than ${MAX_TOOL_ANSWER_BYTES} bytes and was not read`,
            });
          chunks.push(c);
        });
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          if (status >= 200 && status < 300) finish({ status: "succeeded", text });
          else finish({ status: "failed", text: `the tool answered HTTP ${status}` });
        });
        res.on("error", () => finish({ status: "failed", text: "the tool's answer broke off" }));
      });
      const timer = setTimeout(
        () => finish({ status: "timeout", text: `the tool did not answer within ${target.timeoutMs} ms` }),
        target.timeoutMs,
      );
      const onAbort = () => finish({ status: "timeout", text: "the reply's time ran out before the tool answered" });
      signal.addEventListener("abort", onAbort, { once: true });
      req.on("error", (e: NodeJS.ErrnoException) =>
        finish(
          e.code === "EADDRNOTPUBLIC"
            ? { status: "refused_address", text: "the tool's address is not a public address; the call was not made" }
            : { status: "failed", text: `the tool could not be reached (${e.code ?? "error"})` },
        ),
      );
      if (target.method === "POST") req.end(body);
      else req.end();
    });
}
