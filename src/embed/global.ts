// The entry point of {app_url}/embed/v1.js: the host script as the global `AiAgent`.
import { type LauncherOptions, launcher } from "./launcher.js";
import { type MountOptions, mount, type StartOptions, start, version } from "./mount.js";

// Served from {app_url}/embed/v1.js: that is where the frame is, unless the page says otherwise.
const src = (document.currentScript as HTMLScriptElement | null)?.src;
const appUrl = src ? new URL(src).origin : undefined;
const withAppUrl = <T extends MountOptions>(options: T): T =>
  appUrl && options && options.appUrl === undefined ? { ...options, appUrl } : options;

(globalThis as unknown as { AiAgent: unknown }).AiAgent = Object.freeze({
  mount: (element: Element, options: MountOptions) => mount(element, withAppUrl(options)),
  start: (element: Element | string, options?: StartOptions) => start(element, options),
  launcher: (options: LauncherOptions) => launcher(withAppUrl(options)),
  version,
});
