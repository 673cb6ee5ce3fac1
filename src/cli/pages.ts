import type { App } from "../app.js";
import { consoleRoutes } from "../console/routes.js";
import type { DemoCredentials } from "../frame/demo.js";
import { frameRoutes } from "../frame/routes.js";
import type { PageRoute } from "../protocol/http/pages.js";

/** The pages `aiagent serve` adds beside the API: the chat frame, the demo host page and the console. */
export function servicePages(app: App, demo: () => DemoCredentials | undefined): PageRoute[] {
  return [...frameRoutes(app, { demo }), ...consoleRoutes(app)];
}
