import type { App } from "../app.js";
import type { Route } from "../protocol/http/types.js";

/** The chat frame's routes. */
export function frameRoutes(_app: App): Route[] {
  return [];
}
