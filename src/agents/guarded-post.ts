import * as http from "node:http";
import * as https from "node:https";
import { isPublicAddress } from "../webhooks/addresses.js";
import { guardedLookup } from "../webhooks/http-sender.js";

/** What the agent reads of an HTTP answer: its status, and its body as a stream or as text. */
export interface PostAnswer {
  ok: boolean;
  status: number;
  statusText: string;
  body: AsyncIterable<Uint8Array> | null;
  text(): Promise<string>;
}

/** Posts a JSON body; the answer's body is streamed. */
export type Post = (
  url: string,
  headers: Record<string, string>,
  body: string,
  signal: AbortSignal,
) => Promise<PostAnswer>;

/** Global fetch (any address: the service's own agent, AIAGENT_LLM_*, which the operator chose). */
export const fetchPost: Post = async (url, headers, body, signal) => {
  const res = await fetch(url, { method: "POST", headers, body, signal });
  return {
    ok: res.ok,
    status: res.status,
    statusText: res.statusText,
    // Node's web streams are async iterable; the DOM typings do not say so.
    body: res.body as unknown as AsyncIterable<Uint8Array> | null,
    text: () => res.text(),
  };
};

/**
 * Posts only to public addresses, checked at the connection itself as the webhook sender does (a name that
 * resolved to a public address when the chatbot was saved cannot be turned to an internal one later: DNS
 * rebinding), and a literal address refused like a resolved one. No redirects are followed.
 */
export function publicOnlyPost(): Post {
  const lookup = guardedLookup(false);
  return (url, headers, body, signal) =>
    new Promise<PostAnswer>((resolve, reject) => {
      const u = new URL(url);
      const host = u.hostname.replace(/^\[|\]$/g, "");
      if ((/^[\d.]+$/.test(host) || host.includes(":")) && !isPublicAddress(host))
        return reject(new Error(`${host} is not a public address`));
      const client = u.protocol === "https:" ? https : http;
      const req = client.request(
        url,
        { method: "POST", headers: { ...headers, "content-length": String(Buffer.byteLength(body)) }, lookup, signal },
        (res) => {
          const status = res.statusCode ?? 0;
          resolve({
            ok: status >= 200 && status < 300,
            status,
            statusText: res.statusMessage ?? "",
            body: res,
            text: async () => {
              const chunks: Buffer[] = [];
              for await (const c of res) chunks.push(c as Buffer);
              return Buffer.concat(chunks).toString("utf8");
            },
          });
        },
      );
      req.on("error", reject);
      req.end(body);
    });
}
