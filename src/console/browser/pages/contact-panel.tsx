import { useContext } from "preact/hooks";
import type { Contact, ConversationSummary } from "../../../../gen/aiagent/v1/conversation_service_pb.js";
import { conversations, sessions } from "../api.js";
import { SessionContext } from "../session.js";
import { Empty, ErrorNote, Loading, useLoad, when } from "../ui.js";

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
      <ContactConversations contactId={c.contactId} shown={props.shown} />
      {s.admin && <ContactSessions userId={c.userId} />}
    </details>
  );
}

function ContactConversations({ contactId, shown }: { contactId: string; shown: string }) {
  const [list, reload] = useLoad(
    async () => (await conversations.getConversationsForContact({ contactId, limit: 50 })).data?.conversations ?? [],
    [contactId],
  );
  return (
    <section aria-labelledby="contact-conversations">
      <h3 id="contact-conversations">Conversations</h3>
      {list.state === "loading" && <Loading what="conversations" />}
      {list.state === "error" && <ErrorNote error={list.error} onRetry={reload} />}
      {list.state === "ok" && list.data.length === 0 && <Empty>No conversations.</Empty>}
      {list.state === "ok" && list.data.length > 0 && (
        <ul class="contact-panel__list" data-testid="contact-conversations">
          {list.data.map((v) => (
            <ConversationLine key={v.conversationId} v={v} shown={v.conversationId === shown} />
          ))}
        </ul>
      )}
    </section>
  );
}

function ConversationLine({ v, shown }: { v: ConversationSummary; shown: boolean }) {
  return (
    <li aria-current={shown ? "true" : undefined}>
      <span class={`badge badge--${v.status}`}>{v.status}</span> started {when(v.createdAt)}
      {v.latestMessageTime && <> · last message {when(v.latestMessageTime)}</>}
      {v.assignedTo !== "ai_agent" && <> · {v.operatorName || v.assignedTo}</>}
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
    <section aria-labelledby="contact-sessions">
      <h3 id="contact-sessions">Sessions</h3>
      {list.state === "loading" && <Loading what="sessions" />}
      {list.state === "error" && <ErrorNote error={list.error} onRetry={reload} />}
      {list.state === "ok" && list.data.length === 0 && <Empty>No sessions.</Empty>}
      {list.state === "ok" && list.data.length > 0 && (
        <ul class="contact-panel__list" data-testid="contact-sessions">
          {list.data.map((r) => (
            <li key={r.sessionId}>
              <span class="badge">{r.status}</span> since {when(r.createdAt)} · last used {when(r.lastUsedAt)}
              {r.lastOrigin && <> · {r.lastOrigin}</>}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
