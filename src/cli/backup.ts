import { resolve } from "node:path";
import { backupDatabase, restoreDatabase } from "../app.js";
import { loadConfig } from "../config.js";
import type { Values } from "./args.js";
import { configFlags, type Out } from "./commands.js";

/** `aiagent backup FILE` and `aiagent restore FILE`, on the database --db or AIAGENT_DB names. */
export const BACKUP_COMMANDS: Record<"backup" | "restore", (values: Values, file: string, out: Out) => Promise<void>> =
  {
    async backup(values, file, out) {
      const config = loadConfig(process.env, {}, configFlags(values));
      const dest = resolve(file);
      const { pages } = await backupDatabase(config, dest);
      out(
        { backup: dest, database: config.dbPath, pages },
        `backup of ${config.dbPath} written to ${dest} (${pages} pages)`,
      );
    },
    async restore(values, file, out) {
      const config = loadConfig(process.env, {}, configFlags(values));
      const from = resolve(file);
      const { pages, kept } = await restoreDatabase(config, from);
      out(
        { restored: from, database: config.dbPath, pages, ...(kept ? { previous: kept } : {}) },
        `${from} restored as ${config.dbPath} (${pages} pages)${kept ? `; the database it replaced is kept as ${kept}` : ""}`,
      );
    },
  };
