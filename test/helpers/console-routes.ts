import type { App } from "../../src/app.js";
import { consoleRoutes } from "../../src/console/routes.js";
import { frameRoutes } from "../../src/frame/routes.js";

/** The frame's and the console's routes, as `aiagent serve` has them: an `extraRoutes` override for a test service. */
export const consoleAndFrameRoutes = (app: App) => [...frameRoutes(app), ...consoleRoutes(app)];
