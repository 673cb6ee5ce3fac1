import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { gzip as gzipCb } from "node:zlib";
import type { PageRequest, PageRoute } from "./pages.js";
import { type HttpResponse, pathOf, sendJson } from "./types.js";

const gzip = promisify(gzipCb);

/** The generated OpenAPI document, relative to the package root. */
const OPENAPI_FILE = "gen/openapi/aiagent.v1.openapi.json";

/** A file served from memory, compressed once. */
interface Asset {
  type: string;
  body: Buffer;
  gzip: Buffer | undefined;
  cacheControl: string;
}

// Swagger UI draws with inline styles and data: images; everything else comes from this origin only.
const DOCS_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>aiagent API reference</title>
<link rel="stylesheet" href="/docs/assets/swagger-ui.css">
<link rel="icon" type="image/png" href="/docs/assets/favicon-32x32.png">
</head>
<body>
<div id="swagger-ui"></div>
<script src="/docs/assets/swagger-ui-bundle.js"></script>
<script src="/docs/assets/init.js"></script>
</body>
</html>
`;

// No validator badge (it calls validator.swagger.io) and no persisted authorisation (tokens stay out of browser storage).
const INIT = `window.addEventListener("load", function () {
  window.ui = SwaggerUIBundle({
    url: "/openapi.json",
    dom_id: "#swagger-ui",
    deepLinking: true,
    validatorUrl: null,
    persistAuthorization: false,
    docExpansion: "list",
    defaultModelsExpandDepth: 0
  });
});
`;

/**
 * GET /openapi.json (the OpenAPI document generated from the contract) and GET /docs (a reference page drawn by
 * swagger-ui-dist, whose files are served from node_modules: the page loads nothing from another origin).
 */
export function docsRoutes(): PageRoute[] {
  const swaggerDir = dirname(createRequire(import.meta.url).resolve("swagger-ui-dist/package.json"));
  const files: Record<string, () => Promise<Asset>> = {
    "/openapi.json": once(async () =>
      asset("application/json", await readFile(join(packageRoot(), OPENAPI_FILE)), "no-cache"),
    ),
    "/docs": once(() => asset("text/html; charset=utf-8", Buffer.from(PAGE), "no-cache")),
    "/docs/assets/init.js": once(() => asset("text/javascript; charset=utf-8", Buffer.from(INIT), "no-cache")),
    "/docs/assets/swagger-ui.css": once(async () =>
      asset("text/css; charset=utf-8", await readFile(join(swaggerDir, "swagger-ui.css")), "public, max-age=3600"),
    ),
    "/docs/assets/swagger-ui-bundle.js": once(async () =>
      asset(
        "text/javascript; charset=utf-8",
        await readFile(join(swaggerDir, "swagger-ui-bundle.js")),
        "public, max-age=3600",
      ),
    ),
    "/docs/assets/favicon-32x32.png": once(async () =>
      asset("image/png", await readFile(join(swaggerDir, "favicon-32x32.png")), "public, max-age=3600"),
    ),
  };
  const serve: PageRoute["serve"] = (req, res) => {
    const path = pathOf(req);
    return files[path === "/docs/" ? "/docs" : path]!().then(
      (a) => serveAsset(req, res, path, a),
      () => sendJson(res, 500, { code: "internal", message: "internal error", details: [] }),
    );
  };
  return [
    ...Object.keys(files).map(
      (path): PageRoute => ({ name: `API reference ${path}`, verbs: ["GET", "HEAD"], path, serve }),
    ),
    { name: "API reference /docs/", verbs: ["GET", "HEAD"], path: "/docs/", serve },
  ];
}

/** Writes an asset: gzip when the client takes it, no body for HEAD. */
function serveAsset(req: PageRequest, res: HttpResponse, path: string, a: Asset): void {
  const gzip = a.gzip !== undefined && /\bgzip\b/.test(String(req.headers["accept-encoding"] ?? ""));
  const body = gzip ? a.gzip! : a.body;
  const headers: Record<string, string> = {
    "content-type": a.type,
    "content-length": String(body.length),
    "cache-control": a.cacheControl,
    "x-content-type-options": "nosniff",
    vary: "accept-encoding",
  };
  if (gzip) headers["content-encoding"] = "gzip";
  if (path === "/openapi.json") headers["access-control-allow-origin"] = "*";
  if (a.type.startsWith("text/html"))
    Object.assign(headers, { "content-security-policy": DOCS_CSP, "referrer-policy": "no-referrer" });
  res.writeHead(200, headers);
  if (req.method === "HEAD") res.end();
  else res.end(body);
}

/** An asset, compressed off the event loop's critical path (the Swagger UI bundle is 1.7 MB). */
async function asset(type: string, body: Buffer, cacheControl: string): Promise<Asset> {
  return { type, body, gzip: body.length > 1024 && type !== "image/png" ? await gzip(body) : undefined, cacheControl };
}

/** Loads on first request, then serves from memory; a failed load is tried again next time. */
function once<T>(load: () => Promise<T>): () => Promise<T> {
  let value: Promise<T> | undefined;
  return () => {
    value ??= load().catch((e: unknown) => {
      value = undefined;
      throw e;
    });
    return value;
  };
}

/** The directory of package.json: gen/ sits there whether this file runs from src/ (tsx) or dist/src/ (built). */
function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, "package.json"))) {
    const up = dirname(dir);
    if (up === dir) throw new Error(`docs: package.json not found above ${fileURLToPath(import.meta.url)}`);
    dir = up;
  }
  return dir;
}
