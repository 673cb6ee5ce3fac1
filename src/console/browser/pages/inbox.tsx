import { useContext, useEffect, useRef, useState } from "preact/hooks";
import type {
  Activity,
  Contact,
  ConversationSummary,
  Message,
  Note,
} from "../../../../gen/aiagent/v1/conversation_service_pb.js";
import { conversations } from "../api.js";
import { useAccountWatch } from "../live.js";
import { SessionContext } from "../session.js";
import { CustomerTyping, useOperatorTyping } from "../typing.js";
import { ActionError, Empty, ErrorNote, Loading, PageTitle, useAction, when } from "../ui.js";
import { OthersViewing } from "../viewing.js";
import { ApprovalsPanel } from "./approvals.js";
import { AssignTo } from "./assign.js";
import { ContactPanel } from "./contact-panel.js";
import { ContactPrivacy } from "./contact-privacy.js";
import { type View, ViewPicker } from "./inbox-views.js";
import { ConversationLabelsBar, useLabels } from "./labels.js";
import { AttachFile, MessageFiles } from "./message-files.js";
import { NO_SEARCH, SearchFilterBar, type SearchFilters, SearchResults, useChatbotNames } from "./message-search.js";
import { NotesPanel } from "./notes.js";
import { ReplyBox } from "./saved-reply-picker.js";
import { SlaChip, shownTime } from "./snooze.js";
import { ActivityLine, TakenNotices, TakeOver, useActivity, useTakenFromMe } from "./timeline.js";

const PAGE = 20;
type Filter = "all" | "unread" | "live" | "snoozed";

interface ListState {
  contacts: Contact[];
  hasMore: boolean;
  loading: boolean;
  error: unknown;
}

/** The inbox: contacts on the left (search, filter, pages), the open conversation on the right, both live. */
export function Inbox() {
  const s = useContext(SessionContext)!;
  // user_email_id names the account: its own e-mail, whichever of its people is signed in.
  const email = s.account.email;
  const [search, setSearch] = useState("");
  const [filter, setFilter] = useState<Filter>("all");
  const [view, setView] = useState<View>("all");
  const [labelId, setLabelId] = useState("");
  const [labels] = useLabels();
  const [limit, setLimit] = useState(PAGE);
  const [list, setList] = useState<ListState>({ contacts: [], hasMore: false, loading: true, error: undefined });
  const [open, setOpen] = useState<Contact | undefined>();
  const [found, setFound] = useState<SearchFilters>(NO_SEARCH);
  const [names, chatbots] = useChatbotNames();
  const searching = found.query.trim() !== "";
  const [pulse, setPulse] = useState(0);
  const seq = useRef(0);
  const pending = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);

  // The first `limit` contacts for the search and filter, fetched again after a pause in typing or a live change.
  useEffect(() => {
    const n = ++seq.current;
    setList((l) => ({ ...l, loading: true, error: undefined }));
    const t = setTimeout(() => {
      conversations
        .getContactConversations({
          userEmailId: email,
          search: search.trim(),
          filter,
          view,
          limit,
          offset: 0,
          labelId,
        })
        .then(
          (r) => {
            if (n !== seq.current) return;
            const page = r.data?.data;
            setList({
              contacts: page?.contacts ?? [],
              hasMore: page?.hasMore ?? false,
              loading: false,
              error: undefined,
            });
          },
          (error: unknown) => n === seq.current && setList((l) => ({ ...l, loading: false, error })),
        );
    }, 150);
    return () => clearTimeout(t);
  }, [email, search, filter, view, limit, pulse, labelId]);

  useEffect(() => {
    if (!open) return;
    const fresh = list.contacts.find((c) => c.contactId === open.contactId);
    if (fresh && fresh !== open) setOpen(fresh);
  }, [list.contacts, open]);

  const [live, setLive] = useState<Live>({ n: 0 });
  const taken = useTakenFromMe(s.account.callerEmail, list.contacts);
  useAccountWatch(email, (e) => {
    taken.seen(e);
    if (e.case === "message") setLive((l) => ({ message: e.value, n: l.n + 1 }));
    if (e.case === "conversation") setLive((l) => ({ summary: e.value, n: l.n + 1 }));
    if (e.case === "note") setLive((l) => ({ note: e.value, n: l.n + 1 }));
    // Re-list shortly after a burst of changes: the order, badges and statuses come from the service.
    clearTimeout(pending.current);
    pending.current = setTimeout(() => setPulse((p) => p + 1), e.case === "subscribedAt" ? 0 : 120);
  });

  return (
    <div class={`inbox ${open ? "inbox--open" : ""}`}>
      <section class="inbox__list" aria-labelledby="inbox-title">
        <PageTitle>
          <span id="inbox-title">Inbox</span>
        </PageTitle>
        <div class="inbox__tools">
          <label for="contact-search" class="sr-only">
            Search contacts
          </label>
          <input
            id="contact-search"
            type="search"
            placeholder="Search name, e-mail, phone, user id"
            value={search}
            onInput={(e) => {
              setSearch(e.currentTarget.value);
              setLimit(PAGE);
            }}
          />
          <label for="message-search" class="sr-only">
            Search messages and notes
          </label>
          <input
            id="message-search"
            type="search"
            placeholder="Search messages and notes"
            value={found.query}
            onInput={(e) => setFound({ ...found, query: e.currentTarget.value })}
          />
          {searching && <SearchFilterBar filters={found} onChange={setFound} chatbots={chatbots} />}
          <fieldset class="segmented" hidden={searching}>
            <legend class="sr-only">Show</legend>
            {(["all", "unread", "live", "snoozed"] as const).map((f) => (
              <button
                key={f}
                type="button"
                aria-pressed={filter === f}
                onClick={() => {
                  setFilter(f);
                  setLimit(PAGE);
                }}
              >
                {f[0]!.toUpperCase() + f.slice(1)}
              </button>
            ))}
          </fieldset>
          <label class="inbox__label-filter" hidden={searching}>
            Label
            <select
              // Its own name: the message search has a Label filter of its own.
              aria-label="List by label"
              value={labelId}
              onChange={(e) => {
                setLabelId(e.currentTarget.value);
                setLimit(PAGE);
              }}
            >
              <option value="">Any label</option>
              {labels.map((l) => (
                <option key={l.labelId} value={l.labelId}>
                  {l.name}
                </option>
              ))}
            </select>
          </label>
          <ViewPicker
            hidden={searching}
            view={view}
            onChange={(v) => {
              setView(v);
              setLimit(PAGE);
            }}
          />
        </div>
        <TakenNotices notices={taken.notices} dismiss={taken.dismiss} />
        {searching ? (
          <SearchResults filters={found} names={names} onOpen={setOpen} openConversation={open?.latestConversationId} />
        ) : (
          <ContactList
            list={list}
            names={names}
            openId={open?.contactId}
            onOpen={setOpen}
            empty={
              search || filter !== "all" || view !== "all" || labelId !== ""
                ? "No contacts match."
                : "No conversations yet."
            }
            onMore={() => setLimit(limit + PAGE)}
            onRetry={() => setPulse((p) => p + 1)}
          />
        )}
      </section>
      <section class="inbox__conversation" aria-label="Conversation">
        {open ? (
          <ContactPane
            key={open.contactId}
            contact={open}
            chatbotName={botName(open, names)}
            live={live}
            onBack={() => setOpen(undefined)}
            onChanged={() => setPulse((p) => p + 1)}
          />
        ) : (
          <Empty>Choose a contact to read their conversation.</Empty>
        )}
      </section>
    </div>
  );
}

function ContactList(props: {
  list: ListState;
  names: Map<string, string>;
  openId: string | undefined;
  onOpen: (c: Contact) => void;
  empty: string;
  onMore: () => void;
  onRetry: () => void;
}) {
  const { list } = props;
  if (list.error !== undefined) return <ErrorNote error={list.error} onRetry={props.onRetry} />;
  if (list.loading && list.contacts.length === 0) return <Loading what="contacts" />;
  if (list.contacts.length === 0) return <Empty>{props.empty}</Empty>;
  return (
    <>
      <ul class="contacts" aria-busy={list.loading}>
        {list.contacts.map((c) => {
          const unread = Number(c.unreadMessageCount) || 0;
          const name = c.contactName || c.email || c.userId;
          const bot = botName(c, props.names);
          return (
            <li key={c.contactId}>
              <button
                type="button"
                class="contact"
                aria-current={c.contactId === props.openId ? "true" : undefined}
                data-contact-id={c.contactId}
                data-conversation-id={c.latestConversationId}
                onClick={() => props.onOpen(c)}
              >
                <span class="contact__name">{name}</span>
                <span class="contact__meta">
                  <span class={`badge badge--${c.conversationStatus}`} data-testid="contact-status">
                    {c.conversationStatus}
                  </span>{" "}
                  <PriorityMark priority={c.priority} />{" "}
                  {c.assignedTo !== "ai_agent" && <span class="muted">{c.assignedTo}</span>}
                </span>
                <span class="contact__time">{when(c.latestMessageTime)}</span>
                {(c.snoozedUntil !== "" ||
                  c.firstResponseStatus === "pending" ||
                  c.firstResponseStatus === "breached") && (
                  <span class="contact__timers">
                    {c.snoozedUntil !== "" && (
                      <span class="muted" data-testid="contact-snoozed">
                        Snoozed until {shownTime(c.snoozedUntil)}
                      </span>
                    )}{" "}
                    <SlaChip status={c.firstResponseStatus} dueAt={c.firstResponseDueAt} />
                  </span>
                )}
                {c.latestMessagePreview && (
                  <span class="contact__preview" data-testid="contact-preview">
                    {c.latestMessageRole === "user" ? "" : c.latestMessageRole === "operator" ? "You: " : "AI: "}
                    {c.latestMessagePreview}
                  </span>
                )}
                {bot && (
                  <span class="contact__bot" data-testid="contact-chatbot">
                    {bot}
                  </span>
                )}
                {unread > 0 && (
                  <span class="unread" data-testid="unread-badge">
                    {unread}
                    <span class="sr-only"> unread</span>
                  </span>
                )}
              </button>
            </li>
          );
        })}
      </ul>
      {list.hasMore && (
        <button type="button" class="button more" onClick={props.onMore} disabled={list.loading}>
          {list.loading ? "Loading…" : "Show more contacts"}
        </button>
      )}
    </>
  );
}

/** The contact's chatbot by name: the list's own (every reader has it), else the admin's list of chatbots. */
function botName(c: Contact, names: Map<string, string>): string {
  return c.chatbotName || (names.get(c.chatbotId) ?? "");
}

/** A conversation's priority in the list: nothing for none; its word (not a colour alone), named for readers. */
function PriorityMark(props: { priority: string }) {
  if (!props.priority || props.priority === "none") return null;
  return (
    <span class={`priority priority--${props.priority}`} data-testid="contact-priority" data-priority={props.priority}>
      <span class="sr-only">Priority: </span>
      {props.priority[0]!.toUpperCase() + props.priority.slice(1)}
    </span>
  );
}

type Live = { message?: Message; summary?: ConversationSummary; note?: Note; n: number };

/** One contact: their latest conversation, and a choice of the older ones (get_conversations_for_contact). */
function ContactPane(props: {
  contact: Contact;
  chatbotName: string;
  live: Live;
  onBack: () => void;
  onChanged: () => void;
}) {
  const latest = props.contact.latestConversationId;
  const [chosen, setChosen] = useState(latest);
  const [others, setOthers] = useState<ConversationSummary[]>([]);
  useEffect(() => {
    conversations.getConversationsForContact({ contactId: props.contact.contactId, limit: 50 }).then(
      (r) => setOthers(r.data?.conversations ?? []),
      () => setOthers([]),
    );
  }, [latest]);
  useEffect(() => setChosen(latest), [latest]);
  return (
    <>
      {others.length > 1 && (
        <div class="field conversation-choice">
          <label for="conversation-choice">Conversation</label>
          <select id="conversation-choice" value={chosen} onChange={(e) => setChosen(e.currentTarget.value)}>
            {others.map((c) => (
              <option key={c.conversationId} value={c.conversationId}>
                {when(c.createdAt)} · {c.status}
                {c.conversationId === latest ? " (latest)" : ""}
              </option>
            ))}
          </select>
        </div>
      )}
      <ContactPanel contact={props.contact} shown={chosen} />
      <ConversationView
        key={chosen}
        conversationId={chosen}
        initial={chosen === latest ? undefined : others.find((c) => c.conversationId === chosen)}
        rated={others.find((c) => c.conversationId === chosen)?.rating}
        {...props}
      />
    </>
  );
}

/** How the customer rated the conversation, once they have. */
function RatingNote({ rating }: { rating: ConversationSummary["rating"] }) {
  if (!rating) return null;
  return (
    <p class="rating-note" data-testid="conversation-rating">
      Rated {rating.score} of 5 by the customer{rating.comment ? `: “${rating.comment}”` : ""}
    </p>
  );
}

function ConversationView(props: {
  contact: Contact;
  conversationId: string;
  initial: ConversationSummary | undefined;
  /** The customer's rating as the list of the contact's conversations had it. */
  rated: ConversationSummary["rating"];
  /** The chatbot's name, for saved replies' {{chatbot.name}}. */
  chatbotName: string;
  live: Live;
  onBack: () => void;
  onChanged: () => void;
}) {
  const s = useContext(SessionContext)!;
  const id = props.conversationId;
  const [messages, setMessages] = useState<Message[] | undefined>();
  const [loadError, setLoadError] = useState<unknown>();
  const [summary, setSummary] = useState<ConversationSummary | undefined>(props.initial);
  const [reply, setReply] = useState("");
  const a = useAction();
  const end = useRef<HTMLDivElement>(null);
  const typed = useOperatorTyping(id);
  // The timeline, read again when the conversation's state changes (live, or by this person's action).
  const [changes, setChanges] = useState(0);
  const lines = useActivity(id, changes);

  const load = async () => {
    setLoadError(undefined);
    try {
      const all: Message[] = [];
      for (let offset = 0; ; offset += 100) {
        const r = await conversations.getMessagesForConversation({ conversationId: id, limit: 100, offset });
        all.push(...r.messages);
        if (!r.hasMore) break;
      }
      setMessages(all);
    } catch (e) {
      setLoadError(e);
    }
  };
  useEffect(() => {
    void load();
  }, []);

  // Read means read: what is open on a visible page is read (opening it, a customer message arriving while it is
  // open, coming back to the tab, replying), as in Intercom and Chatwoot. One call at a time; one more if asked meanwhile.
  const reading = useRef<"idle" | "busy" | "again">("idle");
  const readNow = () => {
    if (document.visibilityState !== "visible") return;
    if (reading.current !== "idle") {
      reading.current = "again";
      return;
    }
    reading.current = "busy";
    conversations
      .markConversationRead({ conversationId: id })
      .then(
        (r) => {
          if (r.data) setSummary(r.data);
          props.onChanged();
        },
        () => undefined,
      )
      .finally(() => {
        const again = reading.current === "again";
        reading.current = "idle";
        if (again) readNow();
      });
  };
  const unreadAtOpen = Number(props.initial?.unreadMessageCount ?? props.contact.unreadMessageCount) || 0;
  useEffect(() => {
    if (unreadAtOpen > 0) readNow();
    const shown = () => {
      if (document.visibilityState === "visible") readNow();
    };
    document.addEventListener("visibilitychange", shown);
    return () => document.removeEventListener("visibilitychange", shown);
  }, []);

  // Live: a message of this conversation is appended once (message_order says where); a state change replaces it.
  useEffect(() => {
    const m = props.live.message;
    if (m && m.conversationId === id)
      setMessages((ms) => (ms && !ms.some((x) => x.messageOrder === m.messageOrder) ? [...ms, m] : ms));
    if (m && m.conversationId === id && m.role === "user") readNow();
    const sm = props.live.summary;
    if (sm && sm.conversationId === id) {
      setSummary(sm);
      setChanges((c) => c + 1);
    }
  }, [props.live.n]);

  useEffect(() => end.current?.scrollIntoView({ block: "end" }), [messages?.length]);

  const status = summary?.status ?? props.contact.conversationStatus;
  const assignedTo = summary?.assignedTo ?? props.contact.assignedTo;
  const mine = assignedTo === s.account.callerEmail;
  // The holder by name: as the conversation's state says it, else as the timeline's latest line to them does.
  const holderName =
    summary?.operatorName || [...lines].reverse().find((l) => l.toEmail === assignedTo)?.toName || assignedTo;
  const unread = Number(summary?.unreadMessageCount ?? props.contact.unreadMessageCount) || 0;
  const act = (fn: () => Promise<{ data?: ConversationSummary | undefined }>) =>
    void a.run(async () => {
      const r = await fn();
      if (r.data) setSummary(r.data);
      setChanges((c) => c + 1);
      props.onChanged();
    });
  const send = (e: Event) => {
    e.preventDefault();
    const content = reply.trim();
    if (!content) return;
    void a.run(async () => {
      const r = await conversations.replyToConversation({ conversationId: id, content });
      setReply("");
      // Answering a conversation reads it.
      if (unread > 0) readNow();
      const m = r.data;
      if (m) setMessages((ms) => (ms && !ms.some((x) => x.messageOrder === m.messageOrder) ? [...ms, m] : ms));
    });
  };
  const name = props.contact.contactName || props.contact.email || props.contact.userId;
  return (
    <div class="conversation">
      <header class="conversation__head">
        <button type="button" class="button button--quiet back" onClick={props.onBack}>
          ← Contacts
        </button>
        <h2>{name}</h2>
        <p class="muted">
          <span class={`badge badge--${status}`} data-testid="conversation-status">
            {status}
          </span>{" "}
          {assignedTo === "ai_agent"
            ? "AI agent answers"
            : `Held by ${holderName}${holderName === assignedTo ? "" : ` (${assignedTo})`}`}
          {props.contact.email && ` · ${props.contact.email}`}
          {props.contact.phoneNumber && ` · ${props.contact.phoneNumber}`} · user id {props.contact.userId}
        </p>
        <OthersViewing conversationId={id} />
        <RatingNote rating={summary?.rating ?? props.rated} />
        <div class="actions" role="toolbar" aria-label="Conversation actions">
          {!mine && (
            <TakeOver
              holder={assignedTo}
              holderName={holderName}
              busy={a.busy}
              onTake={() =>
                act(() =>
                  conversations.takeOverConversation({
                    conversationId: id,
                    operatorEmail: s.account.callerEmail,
                    // The name the customer sees: the one set under "Your name in the chat" (else the e-mail's local part).
                    operatorName: s.account.callerDisplayName,
                  }),
                )
              }
            />
          )}
          {s.admin && <AssignTo conversationId={id} assignedTo={assignedTo} busy={a.busy} act={act} />}
          {assignedTo !== "ai_agent" && (
            <button
              type="button"
              class="button"
              disabled={a.busy}
              onClick={() => act(() => conversations.releaseConversation({ conversationId: id }))}
            >
              Release to AI
            </button>
          )}
          {unread > 0 ? (
            <button
              type="button"
              class="button"
              disabled={a.busy}
              onClick={() => act(() => conversations.markConversationRead({ conversationId: id }))}
            >
              Mark read
            </button>
          ) : (
            <button
              type="button"
              class="button"
              disabled={a.busy}
              onClick={() =>
                // Back to the list, as Intercom and Chatwoot do: left open, the conversation would be read again.
                void a.run(async () => {
                  await conversations.markConversationUnread({ conversationId: id });
                  props.onChanged();
                  props.onBack();
                })
              }
            >
              Mark unread
            </button>
          )}
          {status === "closed" ? (
            <button
              type="button"
              class="button"
              disabled={a.busy}
              onClick={() => act(() => conversations.reopenConversation({ conversationId: id }))}
            >
              Reopen
            </button>
          ) : (
            <button
              type="button"
              class="button button--danger"
              disabled={a.busy}
              onClick={() => act(() => conversations.closeConversation({ conversationId: id }))}
            >
              Close
            </button>
          )}
          <ContactPrivacy
            contactId={props.contact.contactId}
            name={name}
            onErased={() => [props.onChanged(), props.onBack()]}
          />
        </div>
        <ConversationLabelsBar
          conversationId={id}
          onChanged={() => {
            setChanges((c) => c + 1);
            // The list shows the priority: read it again.
            props.onChanged();
          }}
        />
        <ActionError error={a.error} />
      </header>
      {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable log must be reachable by keyboard (axe) */}
      <div class="messages" role="log" aria-live="polite" aria-label={`Messages with ${name}`} tabIndex={0}>
        {loadError !== undefined && <ErrorNote error={loadError} onRetry={() => void load()} />}
        {messages === undefined && loadError === undefined && <Loading what="messages" />}
        {messages?.length === 0 && <Empty>No messages yet.</Empty>}
        {messages !== undefined &&
          timeline(messages, lines).map((x) =>
            "messageOrder" in x ? (
              <MessageItem key={x.messageOrder} m={x} />
            ) : (
              <ActivityLine key={x.activityId} a={x} />
            ),
          )}
        <div ref={end} />
      </div>
      <CustomerTyping conversationId={id} name={name} />
      <ApprovalsPanel conversationId={id} version={messages?.length ?? 0} />
      <NotesPanel conversationId={id} live={props.live.note} n={props.live.n} />
      <form class="reply" onSubmit={send}>
        <label for="reply" class="sr-only">
          Reply to {name}
        </label>
        <ReplyBox
          id="reply"
          placeholder={mine ? "Write a reply, or / for a saved reply…" : "Take the conversation over to reply"}
          disabled={!mine}
          value={reply}
          variables={{
            "contact.name": props.contact.contactName,
            "contact.email": props.contact.email,
            "operator.name": s.account.callerDisplayName,
            "chatbot.name": props.chatbotName,
          }}
          onInput={(v: string) => {
            setReply(v);
            typed();
          }}
          onSend={send}
        />
        <AttachFile
          conversationId={id}
          caption={reply}
          disabled={!mine || a.busy}
          run={(fn) =>
            void a.run(async () => {
              await fn();
              setReply("");
              if (unread > 0) readNow();
            })
          }
          onSent={(m) =>
            setMessages((ms) => (ms && !ms.some((x) => x.messageOrder === m.messageOrder) ? [...ms, m] : ms))
          }
        />
        <button type="submit" class="button button--primary" disabled={!mine || a.busy || !reply.trim()}>
          Send
        </button>
      </form>
    </div>
  );
}

/** The messages and the timeline's lines, by time (a line after the messages of its instant). */
function timeline(messages: Message[], lines: Activity[]): (Message | Activity)[] {
  const out: (Message | Activity)[] = [];
  let i = 0;
  for (const m of messages) {
    const t = Date.parse(m.createdAt);
    while (i < lines.length && Date.parse(lines[i]!.createdAt) < t) out.push(lines[i++]!);
    out.push(m);
  }
  while (i < lines.length) out.push(lines[i++]!);
  return out;
}

const ROLE_LABEL: Record<string, string> = { user: "Customer", assistant: "AI agent", operator: "Operator" };

function MessageItem({ m }: { m: Message }) {
  let tools: string | undefined;
  if (m.toolCalls) {
    try {
      tools = JSON.stringify(JSON.parse(m.toolCalls), null, 2);
    } catch {
      tools = m.toolCalls;
    }
  }
  return (
    <article class={`message message--${m.role}`} data-role={m.role}>
      <header class="message__head">
        {/* A reply by its author's name (issue 45); "Operator" for replies stored before names were kept. */}
        <strong data-testid="message-author">
          {(m.role === "operator" && m.authorName) || ROLE_LABEL[m.role] || m.role}
        </strong>{" "}
        <time dateTime={m.createdAt}>{when(m.createdAt)}</time>
      </header>
      <p class="message__text">{m.content}</p>
      <MessageFiles files={m.attachments} />
      {m.documents.length > 0 && (
        <ul class="message__docs" aria-label="Cited documents">
          {m.documents.map((d) => (
            <li key={d.url || d.title}>
              {d.url ? (
                <a href={d.url} target="_blank" rel="noopener noreferrer">
                  {d.title || d.url}
                </a>
              ) : (
                d.title
              )}
            </li>
          ))}
        </ul>
      )}
      {tools && (
        <details class="message__tools">
          <summary>Tool calls</summary>
          <pre>{tools}</pre>
        </details>
      )}
    </article>
  );
}
