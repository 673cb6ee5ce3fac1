import type { Call } from "./call.js";

/** The console's session cookie: it holds an ID token, HttpOnly, so no script can read it. */
export const SESSION_COOKIE = "aiagent_console";
/**
 * The header the console's script sends with every call that may ride on the cookie. A page on another origin
 * cannot send it without a CORS preflight this service never grants, so a forged request lacks it (the CSRF defence
 * next to SameSite=Strict).
 */
export const CSRF_HEADER = "x-aiagent-csrf";

/** One cookie's value from a Cookie header; undefined when it is absent. */
export function cookieValue(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim() || undefined;
  }
  return undefined;
}

/**
 * Whether a request comes from the service's own pages: it carries the CSRF header, and the browser's Fetch Metadata
 * (`Sec-Fetch-Site: same-origin`) says so; a browser too old to send it must send an Origin naming this host (a
 * proxy that rewrites Host is then the one case refused). Requests without browser markers (a server) pass on the
 * header alone, but they have no session cookie to ride on anyway.
 */
export function sameOriginRequest(header: (name: string) => string | undefined): boolean {
  if (header(CSRF_HEADER) !== "1") return false;
  const site = header("sec-fetch-site");
  if (site !== undefined) return site === "same-origin";
  const origin = header("origin");
  if (origin === undefined) return true;
  const host = header("host") ?? header(":authority");
  try {
    return host !== undefined && new URL(origin).host === host;
  } catch {
    return false;
  }
}

/**
 * The ID token of the console's session cookie, when the request may use it: no Authorization header (a bearer
 * token always wins), and a same-origin request with the CSRF header. Otherwise undefined.
 */
export function sessionToken(call: Pick<Call, "header">): string | undefined {
  if (call.header("authorization") !== undefined) return undefined;
  const token = cookieValue(call.header("cookie"), SESSION_COOKIE);
  if (!token || !sameOriginRequest((n) => call.header(n))) return undefined;
  return token;
}

/** The Set-Cookie value of the console's session: HttpOnly, SameSite=Strict, Secure over HTTPS; "" and 0 clear it. */
export function sessionCookie(token: string, maxAgeSeconds: number, secure: boolean): string {
  return `${SESSION_COOKIE}=${token}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${maxAgeSeconds}${secure ? "; Secure" : ""}`;
}
