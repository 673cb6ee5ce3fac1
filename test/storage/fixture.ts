import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DEFAULT_APPEARANCE } from "../../src/domain/account/appearance.js";
import { messageEffect, NEW_CONVERSATION } from "../../src/domain/conversation/rules.js";
import { newId } from "../../src/domain/ids.js";
import {
  type Db,
  openDatabase,
  type SqliteRepositories as Repositories,
  sqliteRepositories,
} from "../../src/storage/sqlite/index.js";

/** A real SQLite file in a temporary directory, with the repositories over it. */
export interface StorageFixture {
  db: Db;
  repos: Repositories;
  path: string;
  /** Makes an account with one chatbot; returns their ids. */
  account(): { accountId: string; chatbotId: string };
  close(): void;
}

/** Opens a fresh database file (all migrations applied). */
export function storage(): StorageFixture {
  const dir = mkdtempSync(join(tmpdir(), "aiagent-storage-"));
  const path = join(dir, "test.db");
  const db = openDatabase(path, { synchronous: "OFF" });
  const repos = sqliteRepositories(db);
  let n = 0;
  return {
    db,
    repos,
    path,
    account() {
      const accountId = newId();
      const chatbotId = newId();
      repos.accounts.insert({
        accountId,
        email: `owner${++n}@example.com`,
        passwordHash: null,
        active: true,
        createdAt: 1,
      });
      repos.chatbots.insert({
        chatbotId,
        accountId,
        name: "bot",
        allowedOrigins: [],
        knowledge: [],
        agent: { kind: "built_in" },
        appearance: DEFAULT_APPEARANCE,
        active: true,
        createdAt: 1,
      });
      return { accountId, chatbotId };
    },
    close() {
      db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Writes one user message for (account, user), starting a conversation: what a frame's first message does. */
export function firstMessage(
  repos: Repositories,
  a: { accountId: string; chatbotId: string },
  userId: string,
  at: number,
): string {
  const conversationId = newId();
  repos.conversations.append(
    conversationId,
    { messageId: newId(), role: "user", content: "hello", toolCalls: "", documents: [], createdAt: at },
    messageEffect("user"),
    { conversationId, accountId: a.accountId, chatbotId: a.chatbotId, userId, channel: "web", ...NEW_CONVERSATION },
  );
  return conversationId;
}
