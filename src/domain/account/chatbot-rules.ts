import { invalidArgument } from "../errors.js";
import { LIMITS } from "../limits.js";
import { requireContent, requireText } from "../validate.js";
import type { ChatbotAgent, KnowledgeSnippet } from "./repository.js";

/** Most allowed origins per chatbot (each one is sent in the frame's Content-Security-Policy header). */
export const MAX_ALLOWED_ORIGINS = 50;
/** Most knowledge snippets per chatbot (they are read on every frame call). */
export const MAX_SNIPPETS = 500;
/** Longest snippet URL. */
export const MAX_URL = 2048;

/**
 * The origins a chatbot's frame may be embedded by, normalised to `scheme://host[:port]`. At least one is
 * required and none may be a wildcard: the frame is sent with `frame-ancestors <these origins>`, so a chatbot
 * without a usable origin could never be shown on any page.
 */
export function requireAllowedOrigins(field: string, origins: readonly string[]): string[] {
  if (origins.length === 0)
    throw invalidArgument(
      field,
      "at least one is required (the origin of the page that embeds the chat, e.g. https://shop.example); without " +
        "one the frame can never be embedded",
    );
  if (origins.length > MAX_ALLOWED_ORIGINS) throw invalidArgument(field, `at most ${MAX_ALLOWED_ORIGINS} are allowed`);
  const out: string[] = [];
  for (const o of origins) {
    const origin = requireOrigin(field, o);
    if (!out.includes(origin)) out.push(origin);
  }
  return out;
}

function requireOrigin(field: string, o: string): string {
  if (o.includes("*"))
    throw invalidArgument(
      field,
      `${JSON.stringify(o)} is a wildcard; name each exact origin (browsers match frame-ancestors and window messages against exact origins)`,
    );
  let u: URL;
  try {
    u = new URL(o);
  } catch {
    throw invalidArgument(field, `${JSON.stringify(o)} is not a URL (expected an origin like https://shop.example)`);
  }
  if (u.protocol !== "https:" && u.protocol !== "http:") throw invalidArgument(field, `${o} must be http or https`);
  if (u.username || u.password) throw invalidArgument(field, `${o} must not contain a user name or password`);
  return u.origin;
}

/**
 * A chatbot's knowledge: a JSON array of `{title, url, snippet}` (exactly those fields, all text), which the
 * built-in agent answers from and cites. Anything else is refused here, since the agent could not use it.
 */
export function requireKnowledge(field: string, value: unknown): KnowledgeSnippet[] {
  if (!Array.isArray(value))
    throw invalidArgument(field, 'must be a JSON array of {"title", "url", "snippet"} objects');
  if (value.length > MAX_SNIPPETS) throw invalidArgument(field, `must have at most ${MAX_SNIPPETS} snippets`);
  return value.map((item: unknown, i) => {
    const at = `${field}[${i}]`;
    if (typeof item !== "object" || item === null || Array.isArray(item))
      throw invalidArgument(at, 'must be an object {"title", "url", "snippet"}');
    const rec = item as Record<string, unknown>;
    const unknown = Object.keys(rec).filter((k) => k !== "title" && k !== "url" && k !== "snippet");
    if (unknown.length > 0)
      throw invalidArgument(at, `unknown field ${JSON.stringify(unknown[0])} (only title, url and snippet)`);
    for (const k of ["title", "url", "snippet"] as const)
      if (typeof rec[k] !== "string") throw invalidArgument(`${at}.${k}`, "is required and must be text");
    const title = requireText(`${at}.title`, (rec.title as string).trim());
    const snippet = requireContent(`${at}.snippet`, rec.snippet as string, LIMITS.snippet);
    return { title, url: requireDocumentUrl(`${at}.url`, rec.url as string), snippet };
  });
}

/** The text as a URL, or an invalid argument naming the field. */
function absoluteUrl(field: string, raw: string): URL {
  requireText(field, raw, MAX_URL);
  try {
    return new URL(raw);
  } catch {
    throw invalidArgument(field, `${JSON.stringify(raw)} is not an absolute URL`);
  }
}

function requireDocumentUrl(field: string, raw: string): string {
  const u = absoluteUrl(field, raw);
  // The frame shows it as a link: only web addresses, never javascript: or data:.
  if (u.protocol !== "https:" && u.protocol !== "http:") throw invalidArgument(field, "must be an http or https URL");
  return raw;
}

/** Seals a secret at rest, bound to what it belongs to (the service's key-encryption secrets). */
export interface Sealer {
  seal(plaintext: string, boundTo: string): string;
  open(sealed: string, boundTo: string): string;
}

/** Agent settings as given by the API: an empty kind is the built-in agent; an empty api_key keeps the stored one. */
export interface AgentInput {
  kind: string;
  baseUrl: string;
  model: string;
  apiKey: string;
}

/** Longest endpoint API key accepted. */
const MAX_AGENT_KEY = 4096;

/**
 * Checks agent settings and seals the endpoint's API key. An empty api_key keeps the stored key when the endpoint
 * stays the same (a key is never read back, so a form cannot resend it), and drops it when the endpoint changes.
 */
export function requireAgent(
  field: string,
  input: AgentInput | undefined,
  current: ChatbotAgent,
  o: { sealer: Sealer; boundTo: string; allowLoopbackHttp: boolean },
): ChatbotAgent {
  if (!input || input.kind === "" || input.kind === "built_in") {
    if (input && (input.baseUrl || input.model || input.apiKey))
      throw invalidArgument(`${field}.kind`, "built_in takes no base_url, model or api_key");
    // Named explicitly, the built-in agent answers whatever the service's default agent is.
    return input?.kind === "built_in" ? { kind: "built_in", explicit: true } : { kind: "built_in" };
  }
  if (input.kind !== "openai_compatible")
    throw invalidArgument(`${field}.kind`, "must be one of: built_in, openai_compatible");
  const baseUrl = requireEndpoint(`${field}.base_url`, input.baseUrl, o.allowLoopbackHttp);
  const model = requireText(`${field}.model`, input.model.trim());
  if (input.apiKey.length > MAX_AGENT_KEY)
    throw invalidArgument(`${field}.api_key`, `must be at most ${MAX_AGENT_KEY} characters`);
  const kept = current.kind === "openai_compatible" && current.baseUrl === baseUrl ? current.apiKeySealed : null;
  return {
    kind: "openai_compatible",
    baseUrl,
    model,
    apiKeySealed: input.apiKey ? o.sealer.seal(input.apiKey, o.boundTo) : kept,
  };
}

const LOOPBACK = new Set(["localhost", "127.0.0.1", "[::1]"]);

function requireEndpoint(field: string, raw: string, allowLoopbackHttp: boolean): string {
  const u = absoluteUrl(field, raw);
  if (u.username || u.password) throw invalidArgument(field, "must not contain a user name or password");
  if (u.search || u.hash) throw invalidArgument(field, "must not have a query or fragment");
  // The endpoint receives the customers' conversations: only over TLS, except a local model in development.
  const loopbackHttp = u.protocol === "http:" && LOOPBACK.has(u.hostname) && allowLoopbackHttp;
  if (u.protocol !== "https:" && !loopbackHttp)
    throw invalidArgument(
      field,
      allowLoopbackHttp ? "must be an https URL (or http on localhost)" : "must be an https URL",
    );
  return raw.replace(/\/+$/, "");
}
