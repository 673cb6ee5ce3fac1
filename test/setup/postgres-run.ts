import { randomBytes } from "node:crypto";
import { dropRunDatabases } from "../helpers/postgres.js";

/** Names this test run's PostgreSQL databases (the workers inherit it) and drops them all when the run ends. */
export default function setup() {
  process.env.AIAGENT_TEST_RUN ??= randomBytes(4).toString("hex");
  return async () => {
    await dropRunDatabases();
  };
}
