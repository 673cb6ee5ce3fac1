import { create, type MessageInitShape } from "@bufbuild/protobuf";
import {
  type ConversationService as ConversationServiceDesc,
  type ConversationSummarySchema,
  GetMessagesForConversationResponseSchema,
  type MessageSchema,
  type TypingSchema,
  type ViewingSchema,
  type WatchAccountResponseSchema,
  type WatchConversationResponseSchema,
} from "../../../gen/aiagent/v1/conversation_service_pb.js";
import type { OperatorPictures } from "../../domain/account/operator-picture.js";
import { customerToolCalls } from "../../domain/agent/agent.js";
import type { AccountCaller, Caller } from "../../domain/caller.js";
import type { Clock } from "../../domain/clock.js";
import type { ConversationActivity } from "../../domain/conversation/activity.js";
import { attachmentPath, type FileInput } from "../../domain/conversation/attachments.js";
import type {
  AccountWatchEvent,
  ConversationService,
  ConversationSummary,
  WatchEvent,
} from "../../domain/conversation/conversation-service.js";
import { seesNotes } from "../../domain/conversation/conversation-watches.js";
import type { ConversationLabels } from "../../domain/conversation/labels.js";
import type { ConversationNotes } from "../../domain/conversation/notes.js";
import type { PageForm } from "../../domain/conversation/page-cache.js";
import type { MessageRecord } from "../../domain/conversation/repository.js";
import type { ConversationSearch } from "../../domain/conversation/search.js";
import { invalidArgument, unauthenticated } from "../../domain/errors.js";
import { deferred, mapStream, type StreamMapper } from "../../domain/streams.js";
import { isoTime } from "../../domain/time.js";
import type { TypingSignal } from "../../domain/typing/channel.js";
import { type SignalSource, withSignals } from "../../domain/typing/merge.js";
import {
  TYPING_EXPIRES_MS,
  type TypingService,
  typingFor,
  VIEWING_EXPIRES_MS,
  viewingFor,
} from "../../domain/typing/typing-service.js";
import { auditedCaller } from "../audited.js";
import { accountCaller, anyCaller, frameCaller } from "../auth.js";
import type { AuthorizedCall, Call, Handlers } from "../call.js";
import type { Deadlines, Expiring } from "../deadlines.js";
import { type AnswerEncoder, EncodedAnswer } from "../encoded-answer.js";
import { type Beat, type Heartbeats, withHeartbeats } from "../heartbeats.js";
import { sharedValues } from "../shared-values.js";
import type { WatchHold, WatchLimits } from "../watch-limits.js";
import { contactListForms } from "./contact-list-forms.js";
import { labelHandlers, note, noteHandlers, searchResult } from "./note-handlers.js";

/** A message as the conversation lists answer it to the account's people and clients (the full record). */
export function message(m: MessageRecord): MessageInitShape<typeof MessageSchema> {
  return {
    messageId: m.messageId,
    conversationId: m.conversationId,
    conversationCreatedAt: isoTime(m.conversationCreatedAt),
    content: m.content,
    createdAt: isoTime(m.createdAt),
    messageOrder: m.messageOrder,
    toolCalls: m.toolCalls,
    documents: m.documents,
    role: m.role,
    attachments: (m.attachments ?? []).map((a) => ({ ...a, url: attachmentPath(a.attachmentId) })),
    authorName: m.authorName ?? "",
  };
}

/**
 * A message as its customer reads it (the frame's token): tool_calls reduced to each call's id, name and status
 * (customerToolCalls), all else as the account reads it.
 */
export function customerMessage(m: MessageRecord): MessageInitShape<typeof MessageSchema> {
  const full = message(m);
  return m.toolCalls ? { ...full, toolCalls: customerToolCalls(m.toolCalls) } : full;
}

/** A file's request, as the attachments use case takes it. */
function fileInput(
  req: { conversationId: string; fileName: string; file: Uint8Array; content: string },
  idempotencyKey: string | undefined,
): FileInput {
  return {
    conversationId: req.conversationId,
    fileName: req.fileName,
    file: req.file,
    content: req.content,
    ...(idempotencyKey ? { idempotencyKey } : {}),
  };
}

/** A conversation as the lists answer it. */
export function summary(s: ConversationSummary): MessageInitShape<typeof ConversationSummarySchema> {
  return {
    conversationId: s.conversationId,
    createdAt: isoTime(s.createdAt),
    status: s.status,
    assignedTo: s.assignedTo,
    latestMessageTime: s.latestMessageAt === null ? "" : isoTime(s.latestMessageAt),
    channel: s.channel,
    unreadMessageCount: String(s.unreadCount),
    operatorName: s.operatorName,
    ...(s.rating
      ? { rating: { score: s.rating.score, comment: s.rating.comment, ratedAt: isoTime(s.rating.ratedAt) } }
      : {}),
  };
}

/** A typing signal between a watch stream's events. */
type TypingEvent = { type: "typing"; signal: TypingSignal };

function typingOf(s: TypingSignal): MessageInitShape<typeof TypingSchema> {
  return { conversationId: s.conversationId, from: s.from, name: s.name, expiresInMs: TYPING_EXPIRES_MS };
}

function viewingOf(s: TypingSignal): MessageInitShape<typeof ViewingSchema> {
  return {
    conversationId: s.conversationId,
    name: s.name,
    email: s.email ?? "",
    left: s.from === "left",
    expiresInMs: VIEWING_EXPIRES_MS,
  };
}

/** What the watch streams share: their caps, the clock, and the one timer of their heartbeats and of their tokens' expiry. */
export interface Watch {
  limits: WatchLimits;
  clock: Clock;
  heartbeats: Heartbeats;
  deadlines: Deadlines;
}

/**
 * A watch stream's events with its heartbeats: on a JSON route the transport writes them (a pre-encoded line on the
 * one timer, rest/transcoder.ts), so an idle stream's beat passes through none of the stream's layers; on Connect and
 * gRPC they are items of the stream (`{ cursor }`), as the contract promises.
 */
function beating<T>(events: AsyncIterable<T>, call: AuthorizedCall, watch: Watch): AsyncIterable<T | Beat> {
  return call.transportBeats ? events : withHeartbeats(events, watch.heartbeats);
}

/** A watch stream's place within its bounds (watch limits, token expiry): see `slot`. */
interface Slot {
  /** Aborts when the client goes away or the token expires. */
  signal: AbortSignal;
  /** The stream's events ended: throws TokenExpiredError when they ended because the token expired. */
  done(): void;
  /** Gives the slot back (once the stream ended, however). */
  release(): void;
}

/**
 * A watch stream within its bounds: it holds a slot of the watch limits while open, and ends when the client goes
 * away or its token expires (then with TokenExpiredError: the client resumes with a fresh token). Not a layer of
 * the stream: its events pass through none of it (see domain/streams.ts).
 */
function slot(call: AuthorizedCall, watch: Watch): Slot {
  return new WatchSlot(call, watch);
}

/**
 * `slot`'s one object: an idle stream keeps it for its whole life, so it holds its slots, its stop and its deadline
 * as fields (no closures: docs/live-updates.md, session 23).
 */
class WatchSlot implements Slot, Expiring {
  private readonly hold: WatchHold;
  /** A guarded stream's own controller (ended here when the token expires); otherwise the slot's own. */
  private readonly stop: AbortController;
  /** Only when the slot made its own controller: it follows the client's going away. */
  private readonly onGone: (() => void) | undefined;
  private readonly deadline: number;
  private expired = false;

  constructor(
    private readonly call: AuthorizedCall,
    private readonly watch: Watch,
  ) {
    const w = call.auth;
    const c = w.caller;
    const frame = c?.kind === "frame";
    this.hold = watch.limits.admit({
      kind: frame ? "frame" : "team",
      token: w.tokenKey,
      account: c?.accountId ?? "",
      address: call.peer,
      customer: frame ? `${c.chatbotId} ${c.userId}` : "",
    });
    if (call.stop) this.stop = call.stop;
    else {
      const own = new AbortController();
      this.stop = own;
      this.onGone = () => own.abort();
      call.signal.addEventListener("abort", this.onGone, { once: true });
    }
    // On the streams' one timer of deadlines, not a timer of its own.
    this.deadline = watch.deadlines.hold(w.expiresAt - watch.clock.now(), this);
  }

  get signal(): AbortSignal {
    return this.stop.signal;
  }

  /** The token expired: the stream ends (done() then says why). */
  expire(): void {
    this.expired = true;
    this.stop.abort();
  }

  done(): void {
    if (this.expired)
      throw unauthenticated(
        "the token has expired: watch again with a fresh token (from the last message_order seen)",
        "TokenExpiredError",
      );
  }

  release(): void {
    this.watch.deadlines.drop(this, this.deadline);
    if (this.onGone) this.call.signal.removeEventListener("abort", this.onGone);
    this.hold.release();
  }
}

/**
 * The forms a message page is answered in; the page cache keeps a remembered page in them, made once. The Connect
 * and gRPC routes get a message (the framework would make one of an init on every call); a JSON route gets its
 * encoded bytes, which live outside the JavaScript heap (per message, measured: about 430 bytes of heap for the
 * message, 300 of bytes for the encoding, besides the text).
 */
function pageForms(convert: typeof message) {
  const message_: PageForm<MessageInitShape<typeof GetMessagesForConversationResponseSchema>> = {
    build: (p) =>
      create(GetMessagesForConversationResponseSchema, { messages: p.messages.map(convert), hasMore: p.hasMore }),
    perMessage: 450,
  };
  // One form per JSON route's encoder (a handful, made at start-up).
  const encodedBy = new Map<AnswerEncoder, PageForm<EncodedAnswer>>();
  return {
    message: message_,
    encoded(encoder: AnswerEncoder): PageForm<EncodedAnswer> {
      let form = encodedBy.get(encoder);
      if (!form) {
        form = {
          build: (p) => new EncodedAnswer(encoder({ messages: p.messages.map(convert), hasMore: p.hasMore })),
          perMessage: 300,
        };
        encodedBy.set(encoder, form);
      }
      return form;
    },
  };
}

/**
 * A record's form on the wire, made once per record: an entry of an account's log is one object for every stream it
 * is handed to (domain/log/account-logs.ts), so its conversion, and its JSON (rest/transcoder.ts), are shared.
 */
function onceEach<R extends object, T>(convert: (r: R) => T): (r: R) => T {
  const made = new WeakMap<R, T>();
  return (r) => {
    let v = made.get(r);
    if (v === undefined) {
      made.set(r, (v = convert(r)));
      if (typeof v === "object" && v !== null) sharedValues.add(v);
    }
    return v;
  };
}
const streamedMessage = onceEach(message);
const streamedCustomerMessage = onceEach(customerMessage);
const streamedNote = onceEach(note);

type ConversationItem = MessageInitShape<typeof WatchConversationResponseSchema>;
type AccountItem = MessageInitShape<typeof WatchAccountResponseSchema>;

/** What a conversation watch's items need of the handlers: one object for every stream. */
interface ConversationItemsDeps {
  typing: TypingService;
  presence: { enter(conversationId: string): () => void } | undefined;
  pictured(s: ConversationSummary, accountId: string): Promise<MessageInitShape<typeof ConversationSummarySchema>>;
}

/**
 * A conversation watch's events as the contract's items, its typing signals, and its ends: one object per stream,
 * which an idle stream keeps for its whole life (no closures: docs/live-updates.md, session 23).
 */
class ConversationItems
  implements
    StreamMapper<WatchEvent | TypingEvent | Beat, ConversationItem | Promise<ConversationItem>>,
    SignalSource<WatchEvent | TypingEvent, TypingSignal>
{
  /** The last event's cursor: a heartbeat carries it (resuming from it skips nothing). */
  private cursor = "";
  /** A customer's stream counts as present once the domain let it in (its first event), until it ends. */
  private leave: (() => void) | undefined;

  constructor(
    private readonly d: ConversationItemsDeps,
    readonly caller: Caller,
    private readonly conversationId: string,
    readonly bounds: Slot,
  ) {}

  subscribe(push: (s: TypingSignal) => void): () => void {
    return this.d.typing.subscribe({ conversationId: this.conversationId }, push);
  }

  toEvent(s: TypingSignal): TypingEvent | undefined {
    return typingFor(this.caller, s) ? { type: "typing", signal: s } : undefined;
  }

  map(ev: WatchEvent | TypingEvent | Beat): ConversationItem | Promise<ConversationItem> {
    const customer = this.caller.kind === "frame";
    if (!this.leave && customer && ev.type !== "heartbeat") this.leave = this.d.presence?.enter(this.conversationId);
    if (ev.type === "heartbeat") return { cursor: this.cursor };
    // The AI agent's signal is its looking-up line (the customer's stream only: typingFor), not a typing.
    if (ev.type === "typing" && ev.signal.from === "ai_agent")
      return { event: { case: "activity", value: "looking_up" }, cursor: this.cursor };
    if (ev.type === "typing") return { event: { case: "typing", value: typingOf(ev.signal) }, cursor: this.cursor };
    if (ev.type === "message") {
      const m = ev.message;
      const value = ev.live
        ? (customer ? streamedCustomerMessage : streamedMessage)(m)
        : (customer ? customerMessage : message)(m);
      return { event: { case: "message", value }, cursor: (this.cursor = ev.cursor) };
    }
    // Notes come to the account's people only: the domain decides (conversation-watches.ts).
    if (ev.type === "note")
      return { event: { case: "note", value: streamedNote(ev.note) }, cursor: (this.cursor = ev.cursor) };
    const at = (this.cursor = ev.cursor);
    return this.d
      .pictured(ev.conversation, this.caller.accountId)
      .then((value): ConversationItem => ({ event: { case: "conversation", value }, cursor: at }));
  }

  done(): void {
    this.bounds.done();
  }

  finally(): void {
    this.bounds.release();
    this.leave?.();
  }
}

/** An account watch's events as the contract's items, its typing and viewing signals, and its ends: one object. */
class AccountItems
  implements
    StreamMapper<AccountWatchEvent | TypingEvent | Beat, AccountItem>,
    SignalSource<AccountWatchEvent | TypingEvent, TypingSignal>
{
  private cursor = "";

  constructor(
    private readonly typing: TypingService,
    readonly caller: AccountCaller,
    readonly bounds: Slot,
  ) {}

  subscribe(push: (s: TypingSignal) => void): () => void {
    return this.typing.subscribe({ accountId: this.caller.accountId }, push);
  }

  toEvent(s: TypingSignal): TypingEvent | undefined {
    return typingFor(this.caller, s) || viewingFor(this.caller, s) ? { type: "typing", signal: s } : undefined;
  }

  map(ev: AccountWatchEvent | TypingEvent | Beat): AccountItem {
    if (ev.type === "heartbeat") return { cursor: this.cursor };
    if (ev.type === "typing" && (ev.signal.from === "viewing" || ev.signal.from === "left"))
      return { event: { case: "viewing", value: viewingOf(ev.signal) }, cursor: this.cursor };
    if (ev.type === "typing") return { event: { case: "typing", value: typingOf(ev.signal) }, cursor: this.cursor };
    const cursor = (this.cursor = ev.cursor);
    if (ev.type === "subscribed") return { event: { case: "subscribedAt", value: isoTime(ev.at) }, cursor };
    if (ev.type === "message")
      return { event: { case: "message", value: (ev.live ? streamedMessage : message)(ev.message) }, cursor };
    if (ev.type === "note") return { event: { case: "note", value: streamedNote(ev.note) }, cursor };
    return { event: { case: "conversation", value: summary(ev.conversation) }, cursor };
  }

  done(): void {
    this.bounds.done();
  }

  finally(): void {
    this.bounds.release();
  }
}

/** The ConversationService methods, on the caller the gate admitted by each RPC's declared access. */
export function conversationHandlers(
  conversations: ConversationService,
  watch: Watch,
  typing: TypingService,
  pictures: OperatorPictures,
  notes: ConversationNotes,
  activities: ConversationActivity,
  search: ConversationSearch,
  labels: ConversationLabels,
  timers: Parameters<typeof labelHandlers>[1],
  /** Told which conversations a customer has open (replies to one who is away are e-mailed: domain/mail). */
  presence?: { enter(conversationId: string): () => void },
): Handlers<typeof ConversationServiceDesc> {
  // The cache keeps a page in each form made of it: a customer's form (tool calls redacted) is one apart.
  const pages = pageForms(message);
  const customerPages = pageForms(customerMessage);
  /** A summary with the picture of the operator who holds it (what the frame shows beside their name). */
  const pictured = async (s: ConversationSummary, accountId: string) => ({
    ...summary(s),
    operatorPictureUrl: await pictures.pathFor(accountId, s.assignedTo),
  });
  const itemsDeps: ConversationItemsDeps = { typing, presence, pictured };
  return {
    async sendViewing(req, call) {
      return { expiresInMs: await typing.view(accountCaller(call.auth), req.conversationId, req.leaving ?? false) };
    },
    async sendTyping(req, call) {
      return { forwarded: await typing.signal(anyCaller(call.auth), req.conversationId) };
    },
    ...noteHandlers(notes, keyOf, activities),
    ...labelHandlers(labels, timers),
    async searchConversations(req, call) {
      const caller = accountCaller(call.auth);
      const page = await search.find(
        caller,
        {
          query: req.query,
          chatbotId: req.chatbotId,
          status: req.status,
          operator: req.operator,
          from: req.from,
          to: req.to,
          limit: req.limit,
          pageToken: req.pageToken,
          labelId: req.labelId,
        },
        seesNotes(caller),
      );
      return { data: { results: page.results.map(searchResult), nextPageToken: page.nextPageToken } };
    },
    getContactConversations(req, call) {
      // Not an async function: the list's promise is the answer's (as getMessagesForConversation's). A throw is the
      // promise's rejection.
      try {
        const caller = accountCaller(call.auth);
        const input = {
          userEmailId: req.userEmailId,
          search: req.search,
          filter: req.filter,
          view: req.view,
          labelId: req.labelId,
          limit: req.limit,
          offset: req.offset,
        };
        if (call.encoder) return conversations.reads.listContactsAs(caller, input, contactListForms.json);
        return conversations.reads.listContactsAs(caller, input, contactListForms.message);
      } catch (e) {
        return Promise.reject(e);
      }
    },
    getMessagesForConversation(req, call) {
      // Not an async function: the read's promise is the answer's (an async function would adopt it, two turns of the
      // microtask queue and a promise; awaiting it costs more still, about 200 instructions and 260 bytes, measured).
      // A throw is the promise's rejection.
      try {
        const caller = anyCaller(call.auth);
        const q = { conversationId: req.conversationId, limit: req.limit, offset: req.offset };
        const forms = caller.kind === "frame" ? customerPages : pages;
        if (call.encoder) return conversations.reads.listMessages(caller, q, forms.encoded(call.encoder));
        return conversations.reads.listMessages(caller, q, forms.message);
      } catch (e) {
        return Promise.reject(e);
      }
    },
    async getConversationsForContact(req, call) {
      const caller = accountCaller(call.auth);
      const page = await conversations.reads.listContactConversations(caller, {
        contactId: req.contactId,
        ...pageOf(req),
      });
      return { data: { conversations: page.conversations.map(summary), hasMore: page.hasMore } };
    },
    watchConversation(req, call) {
      // The stream's events are mapped, not passed through a generator of the handler (domain/streams.ts).
      return deferred(() => {
        const items = new ConversationItems(itemsDeps, anyCaller(call.auth), req.conversationId, slot(call, watch));
        const events = withSignals<WatchEvent | TypingEvent, TypingSignal>(
          conversations.watches.watch(
            items.caller,
            {
              conversationId: req.conversationId,
              afterMessageOrder: req.afterMessageOrder,
              afterCursor: req.afterCursor,
            },
            items.bounds.signal,
          ),
          items,
        );
        return mapStream(beating(events, call, watch), items);
      });
    },
    watchAccount(req, call) {
      return deferred(() => {
        const items = new AccountItems(typing, accountCaller(call.auth), slot(call, watch));
        const events = withSignals<AccountWatchEvent | TypingEvent, TypingSignal>(
          conversations.watches.watchAccount(
            items.caller,
            { userEmailId: req.userEmailId, afterCursor: req.afterCursor },
            items.bounds.signal,
          ),
          items,
        );
        return mapStream(beating(events, call, watch), items);
      });
    },
    async listFrameConversations(_req, call) {
      const caller = frameCaller(call.auth);
      const list = await conversations.reads.listFrameConversations(caller);
      return { data: { conversations: await Promise.all(list.map((c) => pictured(c, caller.accountId))) } };
    },
    async sendMessage(req, call) {
      const caller = frameCaller(call.auth);
      const r = await conversations.messages.send(
        caller,
        { conversationId: req.conversationId, content: req.content, idempotencyKey: keyOf(req, call) },
        call.signal,
      );
      return {
        data: {
          conversationId: r.conversationId,
          userMessage: customerMessage(r.userMessage),
          ...(r.reply ? { reply: customerMessage(r.reply) } : {}),
        },
      };
    },
    async *sendMessageStream(req, call) {
      const caller = frameCaller(call.auth);
      for await (const ev of conversations.messages.sendStream(
        caller,
        { conversationId: req.conversationId, content: req.content, idempotencyKey: keyOf(req, call) },
        call.signal,
      )) {
        if (ev.type === "user_message") yield { event: { case: "userMessage", value: customerMessage(ev.message) } };
        else if (ev.type === "delta") yield { event: { case: "delta", value: ev.text } };
        else if (ev.type === "activity") yield { event: { case: "activity", value: ev.activity } };
        else yield { event: { case: "reply", value: customerMessage(ev.message) } };
      }
    },
    async markConversationRead(req, call) {
      const caller = accountCaller(call.auth);
      return { data: summary(await conversations.actions.markRead(caller, req.conversationId)) };
    },
    async markConversationUnread(req, call) {
      const caller = accountCaller(call.auth);
      return { data: summary(await conversations.actions.markUnread(caller, req.conversationId)) };
    },
    async takeOverConversation(req, call) {
      const caller = auditedCaller(call);
      return {
        data: summary(
          await conversations.actions.takeOver(
            caller,
            req.conversationId,
            req.operatorEmail,
            req.operatorName,
            keyOf(req, call),
          ),
        ),
      };
    },
    async releaseConversation(req, call) {
      const caller = auditedCaller(call);
      return { data: summary(await conversations.actions.release(caller, req.conversationId, keyOf(req, call))) };
    },
    async sendAttachment(req, call) {
      const caller = frameCaller(call.auth);
      return {
        data: customerMessage(await conversations.attachments.send(caller, fileInput(req, keyOf(req, call)))),
      };
    },
    async replyWithAttachment(req, call) {
      const caller = accountCaller(call.auth);
      return { data: message(await conversations.attachments.reply(caller, fileInput(req, keyOf(req, call)))) };
    },
    async replyToConversation(req, call) {
      const caller = accountCaller(call.auth);
      return {
        data: message(await conversations.actions.reply(caller, req.conversationId, req.content, keyOf(req, call))),
      };
    },
    async rateConversation(req, call) {
      const caller = frameCaller(call.auth);
      return { data: summary(await conversations.ratings.rate(caller, req.conversationId, req.score, req.comment)) };
    },
    async closeConversation(req, call) {
      const caller = accountCaller(call.auth);
      return {
        data: summary(await conversations.actions.setStatus(caller, req.conversationId, "closed", keyOf(req, call))),
      };
    },
    async reopenConversation(req, call) {
      const caller = accountCaller(call.auth);
      return {
        data: summary(await conversations.actions.setStatus(caller, req.conversationId, "live", keyOf(req, call))),
      };
    },
  };
}

/**
 * The write's idempotency key: the request's field, else (JSON routes, as the IETF draft and Stripe have it) the
 * Idempotency-Key header. Both given and different is refused.
 */
/** The page a list request asks for: every paged list takes it the same way. */
function pageOf<R extends { limit?: number | undefined; offset?: number | undefined }>(req: R) {
  return { limit: req.limit, offset: req.offset };
}

function keyOf(req: { idempotencyKey: string }, call: Call): string | undefined {
  const header = call.header("idempotency-key");
  if (header !== undefined && req.idempotencyKey !== "" && header !== req.idempotencyKey)
    throw invalidArgument("idempotency_key", "differs from the Idempotency-Key header; send one of them");
  return req.idempotencyKey || header;
}
