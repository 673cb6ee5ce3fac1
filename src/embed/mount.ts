/**
 * The host page's side of the chat frame, as a script: creates the frame's iframe and answers its [TOKEN_REFRESH]
 * messages with tokens from the page's own server. Served by the service at {app_url}/embed/v1.js (as the global
 * `AiAgent`) and importable as an ES module (`aiagent/embed`). Runs in browsers only; no dependencies.
 */
import { embedLocale, pickLocale, stringsFor } from "./strings.js";

const TOKEN_REFRESH = "[TOKEN_REFRESH]";
const TOKEN_REFRESH_RESPONSE = "[TOKEN_REFRESH_RESPONSE]";
/** The frame tells its host page of a message that arrived live (its author's role only, never its text). */
const NEW_MESSAGE = "[NEW_MESSAGE]";
/** The customer pressed Escape in the frame: a launcher closes its panel. */
const CLOSE = "[CLOSE]";
/** The frame tells its host page the language it chose (a launcher speaks it too). */
const LOCALE = "[LOCALE]";
const FRAME_PATH = /^\/chatbot-iframe\/([^/]+)\/?$/;
/** A language tag as the service accepts it in the frame's address ("de", "pt-BR"). */
const LANGUAGE_TAG = /^[a-z]{2,3}(-[a-z0-9]{1,8}){0,4}$/i;

/** What `refresh` may resolve to: the JSON your refresh route answers ({access_token}) or the token itself. */
export type RefreshResult = { access_token: string } | string | null | undefined;

/** What the frame tells its host page: a message arrived live (from `role`: "operator", "assistant"), or Escape. */
export type FrameEvent =
  | { type: "message"; role: string }
  | { type: "close" }
  /** The frame's language (en, de, fr, es, ar), told once it starts. */
  | { type: "locale"; locale: string };

/** How to mount the chat. */
export interface MountOptions {
  /**
   * The frame address your server made for this user (createEmbedSession returns it as frameUrl): with a launch code,
   * `{app_url}/chatbot-iframe/{chatbot_id}?launch=…`, or the documented `…?user_id=…&access_token=…`.
   */
  frameUrl?: string;
  /** Instead of frameUrl: the one-time launch code your server got; needs chatbotId (and appUrl from the ES module). */
  launchCode?: string;
  /** Where the frame is served ({app_url}), with launchCode; the script's own origin when it is /embed/v1.js. */
  appUrl?: string;
  /**
   * Gets a new access token from your server (which keeps the refresh token); a failure or null leaves it unanswered.
   */
  refresh: () => Promise<RefreshResult>;
  /** When given, the address must be for this chatbot: a mix-up fails at once instead of showing another chat. */
  chatbotId?: string;
  /** When given, the address must be for this user. */
  userId?: string;
  /** The iframe's accessible title (`Chat`, in the chat's language). */
  title?: string;
  /**
   * The chat's language, a tag like "de" or "pt-BR" (the frame speaks en, de, fr, es and ar): it wins over the
   * visitor's browser languages and the chatbot's default. A language it does not speak falls back to those.
   */
  locale?: string;
  /** Called for what the frame tells the page (a new message, Escape); the launcher uses it for its badge. */
  onEvent?: (event: FrameEvent) => void;
}

/** A mounted chat. */
export interface MountedChat {
  iframe: HTMLIFrameElement;
  /** Removes the iframe and stops answering its messages. */
  unmount(): void;
}

function fail(message: string): never {
  throw new TypeError(`AiAgent.mount: ${message}`);
}

function launchAddress(o: MountOptions): URL {
  if (o.frameUrl !== undefined) fail("give frameUrl or launchCode, not both");
  if (typeof o.launchCode !== "string" || o.launchCode === "") fail("launchCode must be the code from your server");
  if (typeof o.chatbotId !== "string" || o.chatbotId === "") fail("chatbotId is required with launchCode");
  if (typeof o.appUrl !== "string" || o.appUrl === "") fail("appUrl is required with launchCode");
  let url: URL;
  try {
    url = new URL(`chatbot-iframe/${encodeURIComponent(o.chatbotId)}`, `${o.appUrl.replace(/\/+$/, "")}/`);
  } catch {
    fail("appUrl is not an absolute URL");
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") fail("appUrl must be an http(s) URL");
  url.searchParams.set("launch", o.launchCode);
  return withLocale(url, o);
}

function frameAddress(o: MountOptions, pageOrigin: string): URL {
  if (typeof o.frameUrl !== "string" || o.frameUrl === "")
    fail("frameUrl is required (the frame address from your server), or launchCode");
  let url: URL;
  try {
    url = new URL(o.frameUrl);
  } catch {
    fail("frameUrl is not an absolute URL");
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") fail("frameUrl must be an http(s) URL");
  const chatbot = FRAME_PATH.exec(url.pathname)?.[1];
  if (chatbot === undefined) fail("frameUrl is not a /chatbot-iframe/{chatbot_id} address");
  const launch = url.searchParams.get("launch");
  if (!launch && !url.searchParams.get("access_token")) fail("frameUrl has no access_token or launch code");
  if (o.chatbotId !== undefined && decodeURIComponent(chatbot) !== o.chatbotId)
    fail(`frameUrl is for chatbot ${decodeURIComponent(chatbot)}, not ${o.chatbotId}`);
  if (!launch && o.userId !== undefined && url.searchParams.get("user_id") !== o.userId)
    fail(`frameUrl is for user ${url.searchParams.get("user_id") ?? "(none)"}, not ${o.userId}`);
  // Tells the frame where to send [TOKEN_REFRESH]; the service accepts it only if it is an allowed origin. A launch
  // code is bound to its origin already.
  if (!launch && !url.searchParams.has("host_origin")) url.searchParams.set("host_origin", pageOrigin);
  return withLocale(url, o);
}

/** The chat's language in its address, when the page names one; the service answers the frame in it. */
function withLocale(url: URL, o: MountOptions): URL {
  if (o.locale === undefined) return url;
  if (typeof o.locale !== "string" || o.locale.length > 35 || !LANGUAGE_TAG.test(o.locale))
    fail(`locale must be a language tag like "de" or "pt-BR", not ${JSON.stringify(o.locale)}`);
  url.searchParams.set("locale", o.locale);
  return url;
}

function tokenOf(r: RefreshResult): string | undefined {
  const token = typeof r === "string" ? r : r && typeof r === "object" ? r.access_token : undefined;
  return typeof token === "string" && token !== "" ? token : undefined;
}

/** Creates the chat frame inside `element` and answers its token refresh requests through `options.refresh`. */
export function mount(element: Element, options: MountOptions): MountedChat {
  if (!(element instanceof Element)) fail("element must be a DOM element");
  if (typeof options !== "object" || options === null) fail("options are required");
  if (typeof options.refresh !== "function") fail("refresh must be a function that returns a new access token");
  const url = options.launchCode !== undefined ? launchAddress(options) : frameAddress(options, window.location.origin);
  const frameOrigin = url.origin;

  const iframe = document.createElement("iframe");
  iframe.title = options.title ?? stringsFor(pickLocale(options.locale)).chat;
  iframe.allow = "clipboard-write";
  iframe.referrerPolicy = "no-referrer";
  iframe.style.cssText = "width:100%;height:100%;border:0";
  iframe.src = url.href;

  let refreshing: Promise<string | undefined> | undefined;
  const newToken = () => {
    // One request to your server at a time, however many questions the frame asks meanwhile.
    refreshing ??= Promise.resolve()
      .then(options.refresh)
      .then(tokenOf, () => undefined)
      .finally(() => {
        refreshing = undefined;
      });
    return refreshing;
  };

  const onMessage = (event: MessageEvent) => {
    // Only our frame, at the frame's origin, may ask; anything else, and any other message type, is ignored.
    if (event.source !== iframe.contentWindow || event.origin !== frameOrigin) return;
    const data: unknown = event.data;
    if (typeof data !== "object" || data === null) return;
    const type = (data as { type?: unknown }).type;
    if (type === LOCALE) {
      const locale = embedLocale((data as { locale?: unknown }).locale);
      if (locale) options.onEvent?.({ type: "locale", locale });
      return;
    }
    if (type === NEW_MESSAGE || type === CLOSE) {
      const role = (data as { role?: unknown }).role;
      if (type === CLOSE) options.onEvent?.({ type: "close" });
      else if (typeof role === "string") options.onEvent?.({ type: "message", role });
      return;
    }
    if (type !== TOKEN_REFRESH) return;
    const requestId = (data as { request_id?: unknown }).request_id;
    void newToken().then((access_token) => {
      // No answer when your server could not refresh: the frame keeps its token or shows that the session expired.
      if (access_token === undefined || !iframe.contentWindow) return;
      const answer =
        typeof requestId === "string"
          ? { type: TOKEN_REFRESH_RESPONSE, access_token, request_id: requestId }
          : { type: TOKEN_REFRESH_RESPONSE, access_token };
      iframe.contentWindow.postMessage(answer, frameOrigin);
    });
  };
  window.addEventListener("message", onMessage);
  element.append(iframe);
  return {
    iframe,
    unmount() {
      window.removeEventListener("message", onMessage);
      iframe.remove();
    },
  };
}

/** How to start the chat through your server's route (the server helpers of `aiagent/client/…` and aiagent_embed). */
export interface StartOptions extends Omit<MountOptions, "frameUrl" | "launchCode" | "refresh"> {
  /** Where your server mounted the route: `{route}/session` gives the frame, `{route}/refresh` new tokens. "/aiagent". */
  route?: string;
}

/**
 * The one call of a page whose server mounts a helper route (`element`: the element or its CSS selector): asks `{route}/session` for the frame's address, mounts the
 * frame, and refreshes through `{route}/refresh`. Rejects with the route's error when it refuses (e.g. nobody is
 * signed in: 401).
 */
export async function start(element: Element | string, options: StartOptions = {}): Promise<MountedChat> {
  const route = (options.route ?? "/aiagent").replace(/\/+$/, "");
  // Same origin, with your session's cookies; the custom header keeps other sites out (no CORS preflight is granted).
  const post = async (endpoint: string) => {
    const res = await fetch(`${route}/${endpoint}`, {
      method: "POST",
      credentials: "same-origin",
      headers: { "x-requested-with": "aiagent-host" },
    });
    const body = (await res.json().catch(() => ({}))) as Record<string, unknown>;
    if (!res.ok)
      throw new Error(`AiAgent.start: ${route}/${endpoint} answered ${res.status} ${String(body.error ?? "")}`);
    return body;
  };
  const { frame_url } = await post("session");
  if (typeof frame_url !== "string") throw new Error(`AiAgent.start: ${route}/session gave no frame_url`);
  const { route: _, ...rest } = options;
  const target = typeof element === "string" ? document.querySelector(element) : element;
  return mount(target as Element, {
    ...rest,
    frameUrl: frame_url,
    refresh: () => post("refresh") as Promise<RefreshResult>,
  });
}

/** The version of the host script's interface (the `v1` of /embed/v1.js). */
export const version = 1;

// The floating button, for pages that import the module rather than load /embed/v1.js.
export { type Launcher, type LauncherOptions, launcher } from "./launcher.js";
