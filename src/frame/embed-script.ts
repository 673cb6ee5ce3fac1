import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import type { App } from "../app.js";
import type { PageRequest, PageRoute } from "../protocol/http/pages.js";
import type { HttpResponse } from "../protocol/http/types.js";
import { pathOf } from "../protocol/http/types.js";
import { bundle } from "./bundle.js";

/** The host script's address; the version is in the path, so v1 keeps its interface for as long as it is served. */
export const EMBED_SCRIPT_PATH = "/embed/v1.js";
/** The same script under its content hash: cacheable for a year, as its content never changes. */
const HASHED_PATH = /^\/embed\/v1\.([0-9a-f]{16})\.js$/;

interface Built {
  js: string;
  hash: string;
}

let script: Promise<Built> | undefined;

/** The host script (src/embed/), bundled once per process like the frame's script. */
export function embedScript(): Promise<Built> {
  script ??= load()
    .then((js) => ({ js, hash: createHash("sha256").update(js).digest("hex").slice(0, 16) }))
    .catch((e: unknown) => {
      script = undefined;
      throw e;
    });
  return script;
}

async function load(): Promise<string> {
  const source = fileURLToPath(new URL("../embed/global.ts", import.meta.url));
  if (existsSync(source)) return bundle(source);
  // dist/src/frame/embed-script.js → dist/embed/v1.js (written by `npm run build:embed`).
  const prebuilt = fileURLToPath(new URL("../../embed/v1.js", import.meta.url));
  return readFile(prebuilt, "utf8");
}

function send(req: PageRequest, res: HttpResponse, b: Built, cacheControl: string): void {
  const etag = `"${b.hash}"`;
  const headers = {
    "content-type": "text/javascript; charset=utf-8",
    "cache-control": cacheControl,
    etag,
    // The immutable copy of this exact content, for pages that pin it.
    "content-location": `/embed/v1.${b.hash}.js`,
    "x-content-type-options": "nosniff",
    // Public code with no credentials: any page may load it, also as a module (import() needs CORS).
    "access-control-allow-origin": "*",
    "cross-origin-resource-policy": "cross-origin",
  };
  if (req.headers["if-none-match"] === etag) {
    res.writeHead(304, headers);
    res.end();
    return;
  }
  res.writeHead(200, { ...headers, "content-length": String(Buffer.byteLength(b.js)) });
  if (req.method === "HEAD") res.end();
  else res.end(b.js);
}

/** GET {app_url}/embed/v1.js, and the same under its content hash. */
export function embedScriptRoute(app: Pick<App, "log">): PageRoute {
  void embedScript().catch(() => undefined);
  return {
    name: "host script",
    verbs: ["GET", "HEAD"],
    path: /^\/embed\/v1(?:\.[0-9a-f]{16})?\.js$/,
    serve: (req, res) => {
      const hashed = HASHED_PATH.exec(pathOf(req));
      return embedScript().then(
        (b) => {
          if (hashed && hashed[1] !== b.hash) {
            // An older build's hash: say where the current one is rather than serve different content under it.
            res.writeHead(404, { "content-type": "text/plain; charset=utf-8", "cache-control": "no-store" });
            res.end(`this version of the host script is no longer served; use ${EMBED_SCRIPT_PATH}`);
            return;
          }
          // The version path is revalidated hourly, so fixes within v1 reach pages; the hashed one never changes.
          send(req, res, b, hashed ? "public, max-age=31536000, immutable" : "public, max-age=3600");
        },
        (e: unknown) => {
          app.log.error("host script could not be built", { error: (e as Error).message });
          res.writeHead(500, { "content-type": "text/plain; charset=utf-8", "cache-control": "no-store" });
          res.end("the host script could not be built; run npm run build:embed");
        },
      );
    },
  };
}
