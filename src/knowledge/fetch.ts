import * as http from "node:http";
import * as https from "node:https";
import { KnowledgeFailure } from "../domain/knowledge/knowledge-service.js";
import { isPublicAddress } from "../webhooks/addresses.js";
import { guardedLookup } from "../webhooks/http-sender.js";

/** Bounds of the fetches of pages, sitemaps and robots.txt. */
export interface FetchLimits {
  /** Outside development only public addresses are reached, checked at each connection (DNS rebinding). */
  development: boolean;
  /** Largest body read, bytes (default 5 MiB). */
  maxBytes?: number;
  /** Longest one fetch may take, redirects included, ms (default 15,000). */
  timeoutMs?: number;
  /** Most redirects followed (default 5). */
  maxRedirects?: number;
}

/** A fetched document. */
export interface Fetched {
  /** Where it was found after redirects. */
  url: string;
  status: number;
  contentType: string;
  bytes: Uint8Array;
}

export const USER_AGENT = "aiagent-knowledge/1 (+https://github.com/aiagent)";

/**
 * GETs a URL through the SSRF guard: a literal non-public address is refused, and a name is resolved at the
 * connection itself by the guarded lookup (a name that resolved to a public address before cannot be turned to an
 * internal one), at every redirect. Redirects, size and time are bounded; failures are reasons a person can act on.
 */
export function guardedGet(o: FetchLimits): (url: string, signal: AbortSignal) => Promise<Fetched> {
  const lookup = guardedLookup(o.development);
  const maxBytes = o.maxBytes ?? 5 * 1024 * 1024;
  const timeoutMs = o.timeoutMs ?? 15_000;
  const maxRedirects = o.maxRedirects ?? 5;
  const once = (url: URL, signal: AbortSignal) =>
    new Promise<Fetched & { location?: string }>((resolve, reject) => {
      const host = url.hostname.replace(/^\[|\]$/g, "");
      if (!o.development && (/^[\d.]+$/.test(host) || host.includes(":")) && !isPublicAddress(host))
        return reject(
          new KnowledgeFailure(`${url.origin} is not a public address; only public web pages can be indexed`),
        );
      const client = url.protocol === "https:" ? https : http;
      const req = client.request(
        url,
        {
          method: "GET",
          lookup,
          agent: false,
          signal,
          headers: {
            "user-agent": USER_AGENT,
            accept:
              "text/html,application/xhtml+xml,application/xml,text/plain,text/markdown,application/pdf,*/*;q=0.5",
          },
        },
        (res) => {
          const status = res.statusCode ?? 0;
          if (status >= 300 && status < 400 && res.headers.location) {
            res.resume();
            return resolve({
              url: url.toString(),
              status,
              contentType: "",
              bytes: new Uint8Array(),
              location: res.headers.location,
            });
          }
          const declared = Number(res.headers["content-length"] ?? 0);
          if (declared > maxBytes) {
            res.destroy();
            return reject(
              new KnowledgeFailure(
                `${url} is larger than ${Math.round(maxBytes / 1024 / 1024)} MiB; it is not indexed`,
              ),
            );
          }
          const chunks: Buffer[] = [];
          let read = 0;
          res.on("data", (c: Buffer) => {
            read += c.length;
            if (read > maxBytes) {
              res.destroy();
              reject(
                new KnowledgeFailure(
                  `${url} is larger than ${Math.round(maxBytes / 1024 / 1024)} MiB; it is not indexed`,
                ),
              );
            } else chunks.push(c);
          });
          res.on("end", () =>
            resolve({
              url: url.toString(),
              status,
              contentType: String(res.headers["content-type"] ?? ""),
              bytes: new Uint8Array(Buffer.concat(chunks)),
            }),
          );
          res.on("error", reject);
        },
      );
      req.on("error", (e: NodeJS.ErrnoException) => {
        if (e.code === "EADDRNOTPUBLIC")
          reject(
            new KnowledgeFailure(
              `${url.hostname} resolves to a non-public address; only public web pages can be indexed`,
            ),
          );
        else if (e.name === "AbortError") reject(e);
        else if (e.code === "ENOTFOUND") reject(new KnowledgeFailure(`${url.hostname} is not a known host name`));
        else reject(new KnowledgeFailure(`${url.origin} could not be reached (${e.code ?? e.message})`));
      });
      req.end();
    });
  return async (raw, outer) => {
    const timeout = AbortSignal.timeout(timeoutMs);
    const signal = AbortSignal.any([outer, timeout]);
    let url = new URL(raw);
    try {
      for (let hop = 0; ; hop++) {
        if (url.protocol !== "http:" && url.protocol !== "https:")
          throw new KnowledgeFailure(`${url} is not an http or https address`);
        const r = await once(url, signal);
        if (!r.location) return r;
        if (hop >= maxRedirects) throw new KnowledgeFailure(`${raw} redirects more than ${maxRedirects} times`);
        url = new URL(r.location, url);
      }
    } catch (e) {
      if (timeout.aborted && !outer.aborted)
        throw new KnowledgeFailure(`${url} did not answer within ${Math.round(timeoutMs / 1000)} s`);
      throw e;
    }
  };
}
