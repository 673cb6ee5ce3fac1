import { newId } from "../../src/domain/ids.js";
import type { KnowledgeSourceRecord } from "../../src/domain/knowledge/source.js";

/** A knowledge source's stored record for the account's chatbot: a queued file by default, `o` in place. */
export const sourceRecord = (
  a: { accountId: string; chatbotId: string },
  o: Partial<KnowledgeSourceRecord> = {},
): KnowledgeSourceRecord => ({
  sourceId: newId(),
  accountId: a.accountId,
  chatbotId: a.chatbotId,
  kind: "file",
  title: "Manual",
  url: "",
  fileName: "manual.md",
  mediaType: "",
  status: "queued",
  statusReason: "",
  pageCount: 0,
  chunkCount: 0,
  contentHash: "",
  version: 0,
  maxPages: 0,
  maxDepth: 0,
  resyncIntervalHours: 0,
  createdAt: 10,
  updatedAt: 10,
  indexedAt: null,
  ...o,
});
