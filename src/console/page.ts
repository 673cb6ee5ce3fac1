/** Where the console is served. */
export const CONSOLE_PATH = "/console";
/** Where its script and stylesheet are served. */
export const CONSOLE_ASSETS = `${CONSOLE_PATH}/assets/`;

/**
 * Headers of every console page: a strict CSP (scripts and styles only from files of this origin, no inline code),
 * never framed, never cached, no referrer.
 */
export function consoleHeaders(): Record<string, string> {
  const csp = [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "connect-src 'self'",
    "img-src 'self' data:",
    // The embed page previews the chat frame, which this same origin serves.
    "frame-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join("; ");
  return {
    "content-type": "text/html; charset=utf-8",
    "content-security-policy": csp,
    "x-frame-options": "DENY",
    "referrer-policy": "no-referrer",
    "cache-control": "no-store",
    "x-content-type-options": "nosniff",
  };
}

/** The console's HTML shell: the script draws every page into #app (a page of its own for each path). */
export function consolePage(): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>aiagent console</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${CONSOLE_ASSETS}console.css">
<script src="${CONSOLE_ASSETS}console.js" defer></script>
</head>
<body>
<div id="app"><p class="boot" role="status">Loading the console…</p></div>
<noscript><p class="boot">The console needs JavaScript.</p></noscript>
</body>
</html>
`;
}
