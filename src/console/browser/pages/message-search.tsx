import { useContext, useEffect, useRef, useState } from "preact/hooks";
import type { Contact, SearchResult, SnippetPart } from "../../../../gen/aiagent/v1/conversation_service_pb.js";
import { accounts, conversations } from "../api.js";
import { SessionContext } from "../session.js";
import { Empty, ErrorNote, type Loaded, Loading, useLoad, when } from "../ui.js";
import { useLabels } from "./labels.js";

/** The message search's filters, as the inbox's search bar holds them. */
export interface SearchFilters {
  query: string;
  status: "" | "live" | "closed";
  /** "" anyone, "me" the signed-in person, "ai_agent" the AI agent. */
  holder: "" | "me" | "ai_agent";
  chatbotId: string;
  labelId: string;
  from: string;
  to: string;
}

export const NO_SEARCH: SearchFilters = {
  query: "",
  status: "",
  holder: "",
  chatbotId: "",
  labelId: "",
  from: "",
  to: "",
};

/** The account's chatbots by id (admins may list them; operators see none: the contact list names its own). */
export function useChatbotNames(): [Map<string, string>, Loaded<readonly { chatbotId: string; name: string }[]>] {
  const s = useContext(SessionContext)!;
  const [chatbots] = useLoad(
    async () => (s.admin ? ((await accounts.listChatbots({})).data?.chatbots ?? []) : []),
    [s.admin],
  );
  const names = new Map(chatbots.state === "ok" ? chatbots.data.map((c) => [c.chatbotId, c.name] as const) : []);
  return [names, chatbots];
}

/** The filters of the message search: status, who holds it, chatbot, days. */
export function SearchFilterBar(props: {
  filters: SearchFilters;
  onChange: (f: SearchFilters) => void;
  chatbots: Loaded<readonly { chatbotId: string; name: string }[]>;
}) {
  const [labels] = useLabels();
  const f = props.filters;
  const set = (part: Partial<SearchFilters>) => props.onChange({ ...f, ...part });
  return (
    <div class="search-filters">
      <label>
        Status
        <select value={f.status} onChange={(e) => set({ status: e.currentTarget.value as SearchFilters["status"] })}>
          <option value="">Any</option>
          <option value="live">Live</option>
          <option value="closed">Closed</option>
        </select>
      </label>
      <label>
        Held by
        <select value={f.holder} onChange={(e) => set({ holder: e.currentTarget.value as SearchFilters["holder"] })}>
          <option value="">Anyone</option>
          <option value="me">Me</option>
          <option value="ai_agent">AI agent</option>
        </select>
      </label>
      {props.chatbots.state === "ok" && props.chatbots.data.length > 1 && (
        <label>
          Chatbot
          <select value={f.chatbotId} onChange={(e) => set({ chatbotId: e.currentTarget.value })}>
            <option value="">Any</option>
            {props.chatbots.data.map((c) => (
              <option key={c.chatbotId} value={c.chatbotId}>
                {c.name}
              </option>
            ))}
          </select>
        </label>
      )}
      {labels.length > 0 && (
        <label>
          Label
          <select value={f.labelId} onChange={(e) => set({ labelId: e.currentTarget.value })}>
            <option value="">Any</option>
            {labels.map((l) => (
              <option key={l.labelId} value={l.labelId}>
                {l.name}
              </option>
            ))}
          </select>
        </label>
      )}
      <label>
        From
        <input type="date" value={f.from} onInput={(e) => set({ from: e.currentTarget.value })} />
      </label>
      <label>
        To
        <input type="date" value={f.to} onInput={(e) => set({ to: e.currentTarget.value })} />
      </label>
    </div>
  );
}

/** A snippet with its matched words in <mark>: text nodes only, so nothing in a message is read as markup. */
export function Snippet({ parts }: { parts: readonly SnippetPart[] }) {
  return <span class="hit__snippet">{parts.map((p, i) => (p.match ? <mark key={i}>{p.text}</mark> : p.text))}</span>;
}

interface Results {
  results: SearchResult[];
  next: string;
  loading: boolean;
  error: unknown;
}

/** The results of a message search, newest first, with a page more on demand; opening one opens its conversation. */
export function SearchResults(props: {
  filters: SearchFilters;
  names: Map<string, string>;
  onOpen: (c: Contact) => void;
  openConversation: string | undefined;
}) {
  const s = useContext(SessionContext)!;
  const f = props.filters;
  const [r, setR] = useState<Results>({ results: [], next: "", loading: true, error: undefined });
  const seq = useRef(0);
  const [retry, setRetry] = useState(0);
  const ask = (pageToken: string) =>
    conversations.searchConversations({
      query: f.query.trim(),
      status: f.status,
      operator: f.holder === "me" ? s.account.callerEmail : f.holder,
      chatbotId: f.chatbotId,
      labelId: f.labelId,
      from: f.from,
      to: f.to,
      limit: 20,
      pageToken,
    });
  useEffect(() => {
    const n = ++seq.current;
    setR((x) => ({ ...x, loading: true, error: undefined }));
    const t = setTimeout(() => {
      ask("").then(
        (a) =>
          n === seq.current &&
          setR({ results: a.data?.results ?? [], next: a.data?.nextPageToken ?? "", loading: false, error: undefined }),
        (error: unknown) => n === seq.current && setR((x) => ({ ...x, loading: false, error })),
      );
    }, 200);
    return () => clearTimeout(t);
  }, [f.query, f.status, f.holder, f.chatbotId, f.labelId, f.from, f.to, retry]);
  const more = () => {
    const n = seq.current;
    setR((x) => ({ ...x, loading: true }));
    ask(r.next).then(
      (a) =>
        n === seq.current &&
        setR((x) => ({
          results: [...x.results, ...(a.data?.results ?? [])],
          next: a.data?.nextPageToken ?? "",
          loading: false,
          error: undefined,
        })),
      (error: unknown) => n === seq.current && setR((x) => ({ ...x, loading: false, error })),
    );
  };
  if (r.error !== undefined) return <ErrorNote error={r.error} onRetry={() => setRetry((x) => x + 1)} />;
  if (r.loading && r.results.length === 0) return <Loading what="results" />;
  if (r.results.length === 0) return <Empty>No message or note matches.</Empty>;
  return (
    <>
      <ul class="hits" aria-label="Search results" aria-busy={r.loading}>
        {r.results.map((h) => (
          <li key={`${h.kind}:${h.id}`}>
            <button
              type="button"
              class="hit"
              data-testid="search-hit"
              aria-current={h.conversationId === props.openConversation ? "true" : undefined}
              onClick={() => props.onOpen(contactOf(h))}
            >
              <span class="hit__head">
                <span class="contact__name">{h.contactName || h.userId}</span>
                {h.kind === "note" ? (
                  <span class="badge badge--note">Note</span>
                ) : (
                  <span class="muted">
                    {h.role === "user" ? "Customer" : h.role === "operator" ? "Operator" : "AI agent"}
                  </span>
                )}
                <span class="contact__time">{when(h.createdAt)}</span>
              </span>
              <Snippet parts={h.snippet} />
              {(h.chatbotName || props.names.get(h.chatbotId)) && (
                <span class="contact__bot">{h.chatbotName || props.names.get(h.chatbotId)}</span>
              )}
            </button>
          </li>
        ))}
      </ul>
      {r.next && (
        <button type="button" class="button more" onClick={more} disabled={r.loading}>
          {r.loading ? "Loading…" : "Show more results"}
        </button>
      )}
    </>
  );
}

/** The contact a result opens: its conversation as the one shown. */
function contactOf(h: SearchResult): Contact {
  return {
    $typeName: "aiagent.v1.Contact",
    contactId: h.contactId,
    contactName: h.contactName,
    phoneNumber: "",
    email: "",
    conversationStatus: h.conversationStatus,
    assignedTo: h.assignedTo,
    unreadMessageCount: "0",
    latestMessageTime: h.createdAt,
    channels: [],
    userId: h.userId,
    latestConversationId: h.conversationId,
    latestMessagePreview: "",
    latestMessageRole: "",
    chatbotId: h.chatbotId,
    snoozedUntil: "",
    firstResponseDueAt: "",
    firstResponseStatus: "",
    priority: "",
    chatbotName: h.chatbotName,
  };
}
