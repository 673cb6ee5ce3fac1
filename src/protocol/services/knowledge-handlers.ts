import type { MessageInitShape } from "@bufbuild/protobuf";
import type { KnowledgeSourceSchema } from "../../../gen/aiagent/v1/account_service_pb.js";
import { invalidArgument } from "../../domain/errors.js";
import type { KnowledgeService, SourceInput } from "../../domain/knowledge/knowledge-service.js";
import type { KnowledgeSourceRecord } from "../../domain/knowledge/source.js";
import { isoTime } from "../../domain/time.js";
import { accountCaller } from "../auth.js";
import type { AuthorizedCall } from "../call.js";

/** A knowledge source as answered (never what it was made from: a file's bytes stay in storage). */
export function source(s: KnowledgeSourceRecord): MessageInitShape<typeof KnowledgeSourceSchema> {
  return {
    sourceId: s.sourceId,
    chatbotId: s.chatbotId,
    kind: s.kind,
    title: s.title,
    url: s.url,
    fileName: s.fileName,
    mediaType: s.mediaType,
    status: s.status,
    statusReason: s.statusReason,
    pageCount: s.pageCount,
    chunkCount: s.chunkCount,
    contentHash: s.contentHash,
    version: s.version,
    maxPages: s.maxPages,
    maxDepth: s.maxDepth,
    resyncIntervalHours: s.resyncIntervalHours,
    createdAt: isoTime(s.createdAt),
    updatedAt: isoTime(s.updatedAt),
    indexedAt: s.indexedAt === null ? "" : isoTime(s.indexedAt),
  };
}

interface SourceRef {
  chatbotId: string;
  sourceId: string;
}

/** The AccountService's knowledge-source methods; the gate admits operators to the reads, admins to the writes. */
/** A new source's request as the domain takes it (CreateKnowledgeSource's, AddAgentDraftSource's). */
export function sourceInput(req: {
  kind: string;
  title: string;
  fileName: string;
  content: Uint8Array;
  url: string;
  maxPages: number;
  maxDepth: number;
  snippets: { title: string; url: string; snippet: string }[];
  resyncIntervalHours: number;
}): SourceInput {
  // The domain's check names max_pages for either bound; the refusal names the field that was given.
  if (req.maxDepth && !req.maxPages && ["file", "page", "snippets"].includes(req.kind))
    throw invalidArgument("max_depth", "is only for kind site");
  return {
    kind: req.kind,
    title: req.title,
    fileName: req.fileName,
    content: req.content,
    url: req.url,
    maxPages: req.maxPages,
    maxDepth: req.maxDepth,
    snippets: req.snippets.map((k) => ({ title: k.title, url: k.url, snippet: k.snippet })),
    resyncIntervalHours: req.resyncIntervalHours,
  };
}

export function knowledgeHandlers(knowledge: KnowledgeService) {
  return {
    async createKnowledgeSource(
      req: {
        chatbotId: string;
        kind: string;
        title: string;
        fileName: string;
        content: Uint8Array;
        url: string;
        maxPages: number;
        maxDepth: number;
        snippets: { title: string; url: string; snippet: string }[];
        resyncIntervalHours: number;
      },
      call: AuthorizedCall,
    ) {
      const s = await knowledge.create(accountCaller(call.auth), req.chatbotId, sourceInput(req));
      return { data: source(s) };
    },
    async listKnowledgeSources(req: { chatbotId: string }, call: AuthorizedCall) {
      return { data: { sources: (await knowledge.list(accountCaller(call.auth), req.chatbotId)).map(source) } };
    },
    async getKnowledgeSource(req: SourceRef, call: AuthorizedCall) {
      return { data: source(await knowledge.get(accountCaller(call.auth), req.chatbotId, req.sourceId)) };
    },
    async deleteKnowledgeSource(req: SourceRef, call: AuthorizedCall) {
      await knowledge.remove(accountCaller(call.auth), req.chatbotId, req.sourceId);
      return {};
    },
    async resyncKnowledgeSource(req: SourceRef, call: AuthorizedCall) {
      return { data: source(await knowledge.resync(accountCaller(call.auth), req.chatbotId, req.sourceId)) };
    },
    async updateKnowledgeSource(req: SourceRef & { resyncIntervalHours: number }, call: AuthorizedCall) {
      const s = await knowledge.update(accountCaller(call.auth), req.chatbotId, req.sourceId, {
        resyncIntervalHours: req.resyncIntervalHours,
      });
      return { data: source(s) };
    },
    async searchKnowledge(req: { chatbotId: string; query: string; limit?: number | undefined }, call: AuthorizedCall) {
      const r = await knowledge.search(accountCaller(call.auth), req.chatbotId, req.query, req.limit);
      return {
        data: {
          answers: r.answers,
          threshold: r.threshold,
          passages: r.passages.map((p) => ({
            sourceId: p.sourceId,
            sourceTitle: p.sourceTitle,
            title: p.title,
            url: p.anchorUrl,
            headingPath: p.headingPath,
            excerpt: p.excerpt,
            score: Math.round(p.score * 1000) / 1000,
            knowledgeVersion: p.knowledgeVersion,
          })),
        },
      };
    },
  };
}
