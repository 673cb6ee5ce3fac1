import type { MessageInitShape } from "@bufbuild/protobuf";
import type {
  ActivitySchema,
  NoteSchema,
  SearchResultSchema,
} from "../../../gen/aiagent/v1/conversation_service_pb.js";
import type { AccountCaller } from "../../domain/caller.js";
import type { ConversationActivity } from "../../domain/conversation/activity.js";
import type { ConversationLabels, LabelRecord } from "../../domain/conversation/labels.js";
import type { ConversationNotes } from "../../domain/conversation/notes.js";
import type { ActivityRecord, NoteRecord, TimerState } from "../../domain/conversation/repository.js";
import { slaStatus } from "../../domain/conversation/rules.js";
import { type SearchResult, snippetHtml } from "../../domain/conversation/search.js";
import { isoTime } from "../../domain/time.js";
import { accountCaller } from "../auth.js";
import type { AuthorizedCall, Call } from "../call.js";

/** A note as the account's lists, streams and events answer it. */
export function note(n: NoteRecord): MessageInitShape<typeof NoteSchema> {
  return {
    noteId: n.noteId,
    conversationId: n.conversationId,
    authorEmail: n.authorEmail,
    content: n.content,
    createdAt: isoTime(n.createdAt),
    mentionedMemberIds: n.mentionedMemberIds ?? [],
  };
}

/** A timeline line as the account's lists and events answer it. */
export function activity(a: ActivityRecord): MessageInitShape<typeof ActivitySchema> {
  return {
    activityId: a.activityId,
    conversationId: a.conversationId,
    kind: a.kind,
    actorEmail: a.actorEmail,
    actorName: a.actorName,
    fromEmail: a.fromEmail,
    fromName: a.fromName,
    toEmail: a.toEmail,
    toName: a.toName,
    detail: a.detail,
    createdAt: isoTime(a.createdAt),
  };
}

/** A search hit as the search answers it: the snippet as pieces and as escaped HTML. */
export function searchResult(r: SearchResult): MessageInitShape<typeof SearchResultSchema> {
  return {
    kind: r.source,
    id: r.id,
    conversationId: r.conversationId,
    chatbotId: r.chatbotId,
    contactId: r.contactId,
    userId: r.userId,
    contactName: r.contactName,
    conversationStatus: r.status,
    assignedTo: r.assignedTo,
    role: r.role,
    authorEmail: r.authorEmail,
    createdAt: isoTime(r.createdAt),
    snippet: r.snippet,
    snippetHtml: snippetHtml(r.snippet),
    chatbotName: r.chatbotName,
  };
}

/** The ConversationService's note methods (ID token, operator: the gate admits no frame token to them). */
export function noteHandlers(
  notes: ConversationNotes,
  keyOf: (req: { idempotencyKey: string }, call: Call) => string | undefined,
  activities: ConversationActivity,
) {
  return {
    async addConversationNote(
      req: { conversationId: string; content: string; idempotencyKey: string; mentionMemberIds: string[] },
      call: AuthorizedCall,
    ) {
      const n = await notes.add(
        accountCaller(call.auth),
        req.conversationId,
        req.content,
        keyOf(req, call),
        req.mentionMemberIds,
      );
      return { data: note(n) };
    },
    async listConversationNotes(req: { conversationId: string }, call: AuthorizedCall) {
      return { data: { notes: (await notes.list(accountCaller(call.auth), req.conversationId)).map(note) } };
    },
    async listConversationActivity(req: { conversationId: string }, call: AuthorizedCall) {
      const lines = await activities.list(accountCaller(call.auth), req.conversationId);
      return { data: { activities: lines.map(activity) } };
    },
  };
}

function label(l: LabelRecord) {
  return { labelId: l.labelId, name: l.name, createdAt: isoTime(l.createdAt) };
}

/** A conversation's snooze and SLA clock, as the labels' answers carry them. */
type TimersOf = (caller: AccountCaller, conversationId: string) => Promise<TimerState | undefined>;

/**
 * The ConversationService's label methods (and the snooze, answered alike); the gate admits operators to the lists
 * and setting, admins to the rest.
 */
export function labelHandlers(
  labels: ConversationLabels,
  timers: { of: TimersOf; snooze(caller: AccountCaller, id: string, until: string): Promise<unknown> },
) {
  /** What a conversation carries: labels, priority, snooze and SLA clock. */
  const carried = async (caller: AccountCaller, conversationId: string) => {
    const [ids, priority] = [
      await labels.ofConversation(caller, conversationId),
      await labels.priorityOf(caller, conversationId),
    ];
    const t = await timers.of(caller, conversationId);
    const status = slaStatus(t);
    return {
      data: {
        conversationId,
        labelIds: ids,
        priority,
        snoozedUntil: t?.snoozedUntil == null ? "" : isoTime(t.snoozedUntil),
        firstResponseDueAt: status === "none" || t?.slaDueAt == null ? "" : isoTime(t.slaDueAt),
        firstResponseStatus: status,
      },
    };
  };
  return {
    async listLabels(_req: unknown, call: AuthorizedCall) {
      return { data: { labels: (await labels.list(accountCaller(call.auth))).map(label) } };
    },
    async createLabel(req: { name: string }, call: AuthorizedCall) {
      return { data: label(await labels.create(accountCaller(call.auth), req)) };
    },
    async updateLabel(req: { labelId: string; name: string }, call: AuthorizedCall) {
      return { data: label(await labels.rename(accountCaller(call.auth), req)) };
    },
    async deleteLabel(req: { labelId: string }, call: AuthorizedCall) {
      await labels.remove(accountCaller(call.auth), req.labelId);
      return {};
    },
    async listConversationLabels(req: { conversationId: string }, call: AuthorizedCall) {
      return carried(accountCaller(call.auth), req.conversationId);
    },
    async setConversationLabels(req: { conversationId: string; labelIds: string[] }, call: AuthorizedCall) {
      const caller = accountCaller(call.auth);
      await labels.set(caller, req.conversationId, req.labelIds);
      return carried(caller, req.conversationId);
    },
    async setConversationPriority(req: { conversationId: string; priority: string }, call: AuthorizedCall) {
      const caller = accountCaller(call.auth);
      await labels.setPriority(caller, req.conversationId, req.priority);
      return carried(caller, req.conversationId);
    },
    async snoozeConversation(req: { conversationId: string; snoozedUntil: string }, call: AuthorizedCall) {
      const caller = accountCaller(call.auth);
      await timers.snooze(caller, req.conversationId, req.snoozedUntil);
      return carried(caller, req.conversationId);
    },
  };
}
