import type { ExtractedPage } from "../domain/knowledge/chunking.js";
import { KnowledgeFailure, type KnowledgeReader } from "../domain/knowledge/knowledge-service.js";
import { type Fetched, type FetchLimits, guardedGet } from "./fetch.js";
import { robotsRules } from "./robots.js";
import type { ExtractWorker } from "./worker-pool.js";

/** Paths that are not pages: never fetched by a crawl. */
const NOT_A_PAGE = /\.(png|jpe?g|gif|webp|svg|ico|css|js|mjs|json|zip|gz|tgz|mp4|mp3|woff2?|ttf|eot|exe|dmg|iso)$/i;

/** Reads files in the extraction worker, and pages and sites through the guarded fetch. */
export function knowledgeReader(o: { worker: ExtractWorker; fetch: FetchLimits }): KnowledgeReader {
  const get = guardedGet(o.fetch);
  const { worker } = o;
  const page = async (f: Fetched) => {
    if (f.status !== 200) throw new KnowledgeFailure(`${f.url} answered HTTP ${f.status}`);
    return worker.extract({ bytes: f.bytes, fileName: "", contentType: f.contentType, url: f.url });
  };
  return {
    async file(bytes, fileName) {
      const r = await worker.extract({ bytes, fileName, contentType: "", url: "" });
      return { mediaType: r.mediaType, pages: r.pages };
    },
    async page(url, signal) {
      const r = await page(await get(url, signal));
      return r.pages[0]!;
    },
    async *site(start, { maxPages, maxDepth }, signal) {
      const origin = new URL(start).origin;
      let allowed = (_path: string) => true;
      try {
        const robots = await get(`${origin}/robots.txt`, signal);
        if (robots.status === 200) allowed = robotsRules(new TextDecoder().decode(robots.bytes), "aiagent-knowledge");
      } catch (e) {
        if (signal.aborted) throw e;
        if (e instanceof KnowledgeFailure && /public/.test(e.message)) throw e;
      }
      const sameOrigin = (u: string) => {
        try {
          const url = new URL(u);
          url.hash = "";
          return url.origin === origin && !NOT_A_PAGE.test(url.pathname) ? url.toString() : undefined;
        } catch {
          return undefined;
        }
      };
      const seen = new Set<string>();
      const queue: { url: string; depth: number }[] = [];
      const first = await get(start, signal);
      const type = first.contentType.toLowerCase();
      const text = new TextDecoder().decode(first.bytes.slice(0, 2_000_000));
      if (first.status !== 200) throw new KnowledgeFailure(`${start} answered HTTP ${first.status}`);
      if (/xml/.test(type) || /^\s*<\?xml|<urlset|<sitemapindex/.test(text.slice(0, 500))) {
        // A sitemap (or a sitemap index, one level deep): its pages, no links followed.
        const locs = [...text.matchAll(/<loc>\s*([^<\s]+)\s*<\/loc>/g)].map((m) => m[1]!.replaceAll("&amp;", "&"));
        if (/<sitemapindex/.test(text)) {
          for (const sm of locs.slice(0, 20)) {
            const s = sameOrigin(sm);
            if (!s) continue;
            const f = await get(s, signal).catch(() => undefined);
            if (f?.status === 200)
              for (const m of new TextDecoder().decode(f.bytes).matchAll(/<loc>\s*([^<\s]+)\s*<\/loc>/g))
                queue.push({ url: m[1]!.replaceAll("&amp;", "&"), depth: maxDepth });
          }
        } else for (const l of locs) queue.push({ url: l, depth: maxDepth });
      } else queue.push({ url: start, depth: 0 });
      let yielded = 0;
      while (queue.length > 0 && yielded < maxPages) {
        if (signal.aborted) throw signal.reason;
        const { url: raw, depth } = queue.shift()!;
        const url = sameOrigin(raw);
        if (!url || seen.has(url)) continue;
        seen.add(url);
        if (!allowed(new URL(url).pathname + new URL(url).search)) continue;
        let f: Fetched;
        try {
          f = url === start && first ? first : await get(url, signal);
        } catch (e) {
          if (signal.aborted) throw e;
          continue; // a page too large, too slow or unreachable is skipped; the others are indexed
        }
        // A redirect elsewhere leaves the site: not indexed.
        const final = sameOrigin(f.url);
        if (!final || f.status !== 200) continue;
        let r: Awaited<ReturnType<typeof page>>;
        try {
          r = await page(f);
        } catch (e) {
          if (signal.aborted) throw e;
          continue;
        }
        const p: ExtractedPage = { ...r.pages[0]!, url: final };
        if (!p.markdown.trim()) continue;
        yielded++;
        yield p;
        if (depth < maxDepth)
          for (const l of r.links) {
            const next = sameOrigin(l);
            if (next && !seen.has(next)) queue.push({ url: next, depth: depth + 1 });
          }
      }
    },
  };
}
