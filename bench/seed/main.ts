import { parseArgs } from "node:util";
import { buildApp } from "../../src/app.js";
import { loadConfig } from "../../src/config.js";
import { createLogger } from "../../src/log.js";
import { seed } from "./seed.js";
import { seedSize } from "./sizes.js";

// The bench's seeding child: `node bench/seed/main.js --db FILE --email E --scale 10k` (built), one JSON
// SeedResult line out. It opens the database through the service's own app and storage layer, as a server would.
const { values } = parseArgs({
  options: { db: { type: "string" }, email: { type: "string" }, scale: { type: "string" } },
  strict: true,
});
if (!values.db || !values.email || !values.scale) throw new Error("--db, --email and --scale are required");
const size = seedSize(values.scale);
const config = loadConfig(process.env, {}, { AIAGENT_DB: { flag: "--db", value: values.db } });
const app = await buildApp(
  config,
  createLogger("warn", (l) => process.stderr.write(l)),
  { secretWarning: "when generated" },
);
try {
  process.stdout.write(`${JSON.stringify(await seed(app, { email: values.email, size }))}\n`);
} finally {
  await app.close();
}
