import type { JSX } from "preact";
import { useContext } from "preact/hooks";
import type { Contact, ConversationSummary } from "../../../../gen/aiagent/v1/conversation_service_pb.js";
import { conversations, sessions } from "../api.js";
import { SessionContext } from "../session.js";
import { Empty, ErrorNote, type Loaded, Loading, useLoad, when } from "../ui.js";
import { TranscriptButton } from "./mail.js";

/**
 * Who the customer is, beside their conversation: the profile the client's server sent, their conversations (the
 * one shown marked), and for admins their sessions (ListSessions is an admin RPC, so operators see the rest).
 */
export function ContactPanel(props: { contact: Contact; shown: string }) {
  const s = useContext(SessionContext)!;
  const c = props.contact;
  const fields: [string, string][] = [
    ["Name", c.contactName],
    ["E-mail", c.email],
    ["Phone", c.phoneNumber],
    ["User id", c.userId],
    ["Channels", c.channels.join(", ")],
  ];
  return (
    <details class="contact-panel">
      <summary>Contact details</summary>
      <dl class="contact-panel__fields" data-testid="contact-fields">
        {fields.map(([label, value]) => (
          <div key={label}>
            <dt>{label}</dt>
            <dd>{value || <span class="muted">not given</span>}</dd>
          </div>
        ))}
      </dl>
      <TranscriptButton conversationId={props.shown} email={c.email} />
      <ContactConversations contactId={c.contactId} shown={props.shown} />
      {s.admin && <ContactSessions userId={c.userId} />}
    </details>
  );
}

/** A titled list of the panel: its loading, error and empty states, then one line per item. */
function PanelList<T>(props: {
  id: string;
  title: string;
  list: Loaded<T[]>;
  reload: () => void;
  line: (item: T) => JSX.Element;
}) {
  const { list } = props;
  const what = props.title.toLowerCase();
  return (
    <section aria-labelledby={props.id}>
      <h3 id={props.id}>{props.title}</h3>
      {list.state === "loading" && <Loading what={what} />}
      {list.state === "error" && <ErrorNote error={list.error} onRetry={props.reload} />}
      {list.state === "ok" && list.data.length === 0 && <Empty>No {what}.</Empty>}
      {list.state === "ok" && list.data.length > 0 && (
        <ul class="contact-panel__list" data-testid={props.id}>
          {list.data.map(props.line)}
        </ul>
      )}
    </section>
  );
}

function ContactConversations({ contactId, shown }: { contactId: string; shown: string }) {
  const [list, reload] = useLoad(
    async () => (await conversations.getConversationsForContact({ contactId, limit: 50 })).data?.conversations ?? [],
    [contactId],
  );
  return (
    <PanelList
      id="contact-conversations"
      title="Conversations"
      list={list}
      reload={reload}
      line={(v) => <ConversationLine key={v.conversationId} v={v} shown={v.conversationId === shown} />}
    />
  );
}

function ConversationLine({ v, shown }: { v: ConversationSummary; shown: boolean }) {
  return (
    <li aria-current={shown ? "true" : undefined}>
      <span class={`badge badge--${v.status}`}>{v.status}</span> started {when(v.createdAt)}
      {v.latestMessageTime && <> · last message {when(v.latestMessageTime)}</>}
      {v.assignedTo !== "ai_agent" && <> · {v.operatorName || v.assignedTo}</>}
      {v.rating && (
        <>
          {" "}
          · rated {v.rating.score}/5{v.rating.comment && <>: “{v.rating.comment}”</>}
        </>
      )}
      {shown && <span class="muted"> (shown)</span>}
    </li>
  );
}

function ContactSessions({ userId }: { userId: string }) {
  const [list, reload] = useLoad(
    async () => (await sessions.listSessions({ userId, limit: 20 })).data?.sessions ?? [],
    [userId],
  );
  return (
    <PanelList
      id="contact-sessions"
      title="Sessions"
      list={list}
      reload={reload}
      line={(r) => (
        <li key={r.sessionId}>
          <span class="badge">{r.status}</span> since {when(r.createdAt)} · last used {when(r.lastUsedAt)}
          {r.lastOrigin && <> · {r.lastOrigin}</>}
        </li>
      )}
    />
  );
}
