import type { App } from "../app.js";

/** Result of a seed run. */
export interface SeedResult {
  account_id: string;
  chatbot_id: string;
  contacts: number;
  conversations: number;
  messages: number;
}

/** Fills an account with synthetic contacts, conversations and messages through the storage layer. */
export function seed(app: App, o: { email: string; contacts: number; messages: number }): SeedResult {
  throw new Error(`seed is not built yet (${o.email}, ${app.config.dbPath})`);
}
