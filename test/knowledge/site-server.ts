import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/** A small help-centre site on loopback: pages by path (changeable), robots.txt, a redirect, a 404 and a huge page. */
export interface TestSite {
  url: string;
  pages: Map<string, string>;
  /** Paths requested, in order. */
  requested: string[];
  close(): Promise<void>;
}

const html = (title: string, body: string) =>
  `<!doctype html><html><head><title>${title}</title></head><body><nav><a href="/">Home</a></nav><main>${body}</main></body></html>`;

/** Serves the site; `/old-returns` redirects to `/returns`, `/huge` is 6 MiB, anything unknown is a 404. */
export async function startSite(): Promise<TestSite> {
  const pages = new Map<string, string>([
    [
      "/",
      html(
        "Help centre",
        `<h1>Help centre</h1><p>Welcome to the help centre of the bicycle shop. Read about deliveries, returns and repairs.</p>
         <ul><li><a href="/delivery">Delivery</a></li><li><a href="/old-returns">Returns</a></li>
         <li><a href="/repairs#book">Repairs</a></li><li><a href="/private/staff">Staff</a></li>
         <li><a href="/missing">Missing</a></li><li><a href="/huge">Huge</a></li>
         <li><a href="https://elsewhere.example/page">Elsewhere</a></li></ul>`,
      ),
    ],
    [
      "/delivery",
      html(
        "Delivery",
        `<h1 id="delivery">Delivery</h1><p>Bicycles are delivered by a freight carrier within seven working days, assembled and ready to ride.</p>
         <h2 id="freight-costs">Freight costs</h2><p>Freight costs 49 EUR per bicycle; accessories travel free with a bicycle.</p>`,
      ),
    ],
    [
      "/returns",
      html(
        "Returns",
        `<h1 id="returns">Returns</h1><p>An unridden bicycle can be sent back within fourteen days; we collect it at no charge.</p>`,
      ),
    ],
    [
      "/repairs",
      html(
        "Repairs",
        `<h1 id="repairs">Repairs</h1><h2 id="book">Booking a repair</h2><p>Book a workshop slot online; punctures are fixed while you wait.</p>`,
      ),
    ],
    ["/private/staff", html("Staff", "<h1>Staff</h1><p>The secret staff discount code is ZEBRA-42.</p>")],
  ]);
  const requested: string[] = [];
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0]!;
    requested.push(path);
    if (path === "/robots.txt") {
      res.writeHead(200, { "content-type": "text/plain" });
      return res.end("User-agent: *\nDisallow: /private/\n");
    }
    if (path === "/old-returns") {
      res.writeHead(301, { location: "/returns" });
      return res.end();
    }
    if (path === "/huge") {
      res.writeHead(200, { "content-type": "text/html" });
      const block = `<p>${"filler text ".repeat(1000)}</p>`;
      for (let i = 0; i < 600; i++) res.write(block);
      return res.end();
    }
    if (path === "/sitemap.xml") {
      res.writeHead(200, { "content-type": "application/xml" });
      const base = `http://${req.headers.host}`;
      return res.end(
        `<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>${base}/delivery</loc></url><url><loc>${base}/repairs</loc></url></urlset>`,
      );
    }
    const page = pages.get(path);
    if (!page) {
      res.writeHead(404, { "content-type": "text/html" });
      return res.end("<h1>Not found</h1>");
    }
    res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
    res.end(page);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    pages,
    requested,
    close: () => new Promise((r) => server.close(() => r())),
  };
}
