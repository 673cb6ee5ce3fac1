/**
 * The chat as a floating button: the button opens and closes a panel that holds the chat frame, which stays loaded
 * while closed (the conversation and its live updates go on). Button and panel live in a shadow root under
 * one element whose own box is pinned with inline `!important` styles, so neither the page's styles reach them nor
 * theirs the page.
 */
import { type FrameEvent, type MountedChat, type MountOptions, mount } from "./mount.js";
import { embedLocale, pickLocale, stringsFor, unreadLabel } from "./strings.js";

/** How to show the launcher; the chat's own options are mount's. */
export interface LauncherOptions extends MountOptions {
  /** The corner of the window the button sits in. Default "bottom-right". */
  position?: "bottom-right" | "bottom-left";
  /** The button's name, read by screen readers and shown as its tooltip. Default "Chat with us", in the chat's language. */
  label?: string;
  /** Open at once. Default false. */
  open?: boolean;
}

/** A mounted launcher. */
export interface Launcher {
  open(): void;
  close(): void;
  toggle(): void;
  readonly isOpen: boolean;
  /** Operator messages that arrived while the panel was closed (shown on the button). */
  readonly unread: number;
  readonly chat: MountedChat;
  /** Removes the button, the panel and the frame. */
  unmount(): void;
}

const PANEL_ID = "aiagent-panel";

const CSS = `
:host { all: initial; }
* { box-sizing: border-box; }
button {
  all: unset; box-sizing: border-box; position: relative; display: grid; place-items: center;
  width: 56px; height: 56px; border-radius: 50%; background: #1f4fd1; color: #fff; cursor: pointer;
  box-shadow: 0 6px 20px rgb(15 30 60 / 0.3);
}
button:focus-visible { outline: 3px solid #1f4fd1; outline-offset: 3px; }
button svg { width: 28px; height: 28px; fill: currentColor; }
.badge {
  position: absolute; top: -4px; inset-inline-end: -4px; min-width: 22px; height: 22px; padding: 0 6px; border-radius: 11px;
  background: #b3261e; color: #fff; font: 700 13px/22px system-ui, sans-serif; text-align: center;
}
.badge[hidden], .panel[hidden] { display: none; }
.panel {
  position: absolute; bottom: 72px; width: min(380px, calc(100vw - 32px)); height: min(600px, calc(100vh - 112px));
  border-radius: 16px; overflow: hidden; background: #fff; box-shadow: 0 12px 40px rgb(15 30 60 / 0.3);
}
.right .panel { right: 0; }
.left .panel { left: 0; }
.sr { position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); white-space: nowrap; }
@media (prefers-reduced-motion: no-preference) { .panel { transition: opacity 120ms; } }
`;

const icon = (path: string) =>
  `<svg viewBox="0 0 24 24" aria-hidden="true" focusable="false"><path d="${path}"/></svg>`;
const CHAT_ICON = icon("M4 3h16a2 2 0 0 1 2 2v11a2 2 0 0 1-2 2H8l-5 4V5a2 2 0 0 1 1-2z");
const CLOSE_ICON = icon("M6.4 5 12 10.6 17.6 5 19 6.4 13.4 12 19 17.6 17.6 19 12 13.4 6.4 19 5 17.6 10.6 12 5 6.4z");

/** Pins a property on the page's element so that no stylesheet of the page overrides it. */
function pin(el: HTMLElement, styles: Record<string, string>): void {
  for (const [k, v] of Object.entries(styles)) el.style.setProperty(k, v, "important");
}

/** Adds the chat to the page as a floating button that opens it. */
export function launcher(options: LauncherOptions): Launcher {
  if (typeof options !== "object" || options === null) throw new TypeError("AiAgent.launcher: options are required");
  const position = options.position ?? "bottom-right";
  if (position !== "bottom-right" && position !== "bottom-left")
    throw new TypeError('AiAgent.launcher: position must be "bottom-right" or "bottom-left"');
  // The page's locale option, else the browser's languages; without an option, the frame's choice once it tells it
  // (it also knows the chatbot's default language).
  let locale = pickLocale(options.locale);
  const label = () => options.label ?? stringsFor(locale).label;

  const host = document.createElement("aiagent-launcher");
  pin(host, {
    all: "initial",
    position: "fixed",
    bottom: "20px",
    [position === "bottom-right" ? "right" : "left"]: "20px",
    "z-index": "2147483000",
    display: "block",
    width: "56px",
    height: "56px",
  });
  const root = host.attachShadow({ mode: "open" });
  root.innerHTML = `<style>${CSS}</style>
<div class="${position === "bottom-right" ? "right" : "left"}">
  <div class="panel" id="${PANEL_ID}" role="dialog" hidden></div>
  <button type="button" aria-expanded="false" aria-controls="${PANEL_ID}"><span class="sr"></span
    ><span class="badge" aria-hidden="true" hidden></span></button>
</div>`;
  const button = root.querySelector("button")!;
  const panel = root.querySelector<HTMLElement>(".panel")!;
  const name = root.querySelector<HTMLElement>(".sr")!;
  const badge = root.querySelector<HTMLElement>(".badge")!;
  const box = root.querySelector<HTMLElement>("div")!;

  let isOpen = false;
  let unread = 0;
  const render = () => {
    const words = stringsFor(locale);
    box.lang = locale;
    panel.setAttribute("aria-label", options.title ?? words.chat);
    if (options.title === undefined && chat) chat.iframe.title = words.chat;
    button.title = label();
    button.setAttribute("aria-expanded", String(isOpen));
    button.innerHTML = isOpen ? CLOSE_ICON : CHAT_ICON;
    button.append(name, badge);
    name.textContent = isOpen ? words.close : unread > 0 ? unreadLabel(locale, label(), unread) : label();
    badge.textContent = unread > 0 ? String(unread) : "";
    badge.hidden = isOpen || unread === 0;
  };

  const onEvent = (e: FrameEvent) => {
    options.onEvent?.(e);
    if (e.type === "close" && isOpen) {
      api.close();
      button.focus();
    } else if (e.type === "message" && e.role === "operator" && !isOpen) {
      unread++;
      render();
    } else if (e.type === "locale" && embedLocale(options.locale) === undefined) {
      locale = e.locale;
      render();
    }
  };
  const chat = mount(panel, { ...options, onEvent });

  const api: Launcher = {
    open() {
      isOpen = true;
      unread = 0;
      panel.hidden = false;
      render();
      // Into the chat: the frame puts the caret in its message box when it gets the focus.
      chat.iframe.focus();
    },
    close() {
      isOpen = false;
      panel.hidden = true;
      render();
    },
    toggle() {
      if (isOpen) api.close();
      else api.open();
    },
    get isOpen() {
      return isOpen;
    },
    get unread() {
      return unread;
    },
    chat,
    unmount() {
      chat.unmount();
      host.remove();
    },
  };
  button.addEventListener("click", () => api.toggle());
  // Escape on the button or anywhere in the panel's own document closes it; inside the frame, the frame says so.
  root.addEventListener("keydown", (ev) => {
    if ((ev as KeyboardEvent).key === "Escape" && isOpen) {
      api.close();
      button.focus();
    }
  });
  render();
  document.body.append(host);
  if (options.open) api.open();
  return api;
}
