/** Headers of every frame page: no caching, no referrer, and only the chatbot's allowed origins may embed it. */
export function frameHeaders(allowedOrigins: string[], apiOrigin: string | undefined): Record<string, string> {
  // Origins were normalised when the chatbot was made; anything that could break out of the header is dropped anyway.
  const ancestors = allowedOrigins.filter((o) => /^https?:\/\/[a-z0-9.\-[\]:]+$/i.test(o));
  const csp = [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    `connect-src 'self'${apiOrigin ? ` ${apiOrigin}` : ""}`,
    // Operators' pictures are served by this service (its API origin when that is another one).
    `img-src 'self' data:${apiOrigin ? ` ${apiOrigin}` : ""}`,
    "base-uri 'none'",
    "form-action 'none'",
    `frame-ancestors ${ancestors.length > 0 ? ancestors.join(" ") : "'none'"}`,
  ].join("; ");
  return {
    "content-type": "text/html; charset=utf-8",
    "content-security-policy": csp,
    "referrer-policy": "no-referrer",
    "cache-control": "no-store",
    "x-content-type-options": "nosniff",
  };
}
