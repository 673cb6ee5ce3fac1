import type { App } from "../../src/app.js";
import { PgStore } from "../../src/storage/postgres/index.js";
import { SqliteStore } from "../../src/storage/sqlite/index.js";
import { selectRows } from "./rows.js";

/** Every table of the app's database, by name: SQLite's schema or PostgreSQL's public schema. */
export async function tableNames(app: App): Promise<string[]> {
  if (app.store instanceof SqliteStore)
    return (
      await selectRows<{ name: string }>(app, "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
    ).map((r) => r.name);
  if (app.store instanceof PgStore)
    return (
      await selectRows<{ table_name: string }>(
        app,
        "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY table_name",
      )
    ).map((r) => r.table_name);
  throw new Error("unknown storage back end");
}

/**
 * Where in the database any of `needles` occurs: "table: row" for each row of any table whose text (every column,
 * as JSON) contains one, case-insensitively. Empty when none does.
 */
export async function findAnywhere(app: App, needles: readonly string[]): Promise<string[]> {
  const found: string[] = [];
  const lower = needles.map((n) => n.toLowerCase());
  for (const table of await tableNames(app)) {
    const rows = await selectRows<Record<string, unknown>>(app, `SELECT * FROM "${table}"`);
    for (const row of rows) {
      const text = JSON.stringify(row, cellText).toLowerCase();
      if (lower.some((n) => text.includes(n))) found.push(`${table}: ${text.slice(0, 300)}`);
    }
  }
  return found;
}

/** A cell as searchable text: bigints as digits, bytes (BLOB, bytea) as their text and their hex. */
function cellText(_key: string, v: unknown): unknown {
  if (typeof v === "bigint") return String(v);
  // JSON.stringify has already turned a Buffer into { type: "Buffer", data: [...] }.
  if (v !== null && typeof v === "object" && (v as { type?: unknown }).type === "Buffer") {
    const bytes = Buffer.from((v as { data: number[] }).data);
    return `${bytes.toString("latin1")} ${bytes.toString("hex")}`;
  }
  return v;
}
