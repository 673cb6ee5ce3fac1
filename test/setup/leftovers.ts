import { afterAll } from "vitest";
import { closeLeftovers } from "../helpers/server.js";

// Registered before the file's own hooks, so it runs after them: whatever a failed or timed-out test left open
// (servers, their PostgreSQL databases, temporary folders) is closed when the file ends, pass or fail.
afterAll(() => closeLeftovers());
