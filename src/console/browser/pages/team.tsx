import { useState } from "preact/hooks";
import type { Invitation, Member } from "../../../../gen/aiagent/v1/account_service_pb.js";
import { accounts, sessions } from "../api.js";
import { DataTable, RowAction } from "../table.js";
import {
  ChatbotOptions,
  Empty,
  ErrorNote,
  Field,
  Link,
  Loading,
  PageTitle,
  SecretRow,
  TextField,
  useAction,
  useLoad,
  when,
} from "../ui.js";

/**
 * The two pages under "Team" in the menu (the top bar holds one entry for both): the account's people, and the teams
 * that split the chatbots between them.
 */
export function TeamTabs({ current }: { current: "people" | "teams" }) {
  return (
    <nav aria-label="Team pages" class="subnav">
      <Link href="/team" current={current === "people"}>
        People
      </Link>
      <Link href="/teams" current={current === "teams"}>
        Teams
      </Link>
    </nav>
  );
}

/** The account's people (invite, change role, remove) and its customers' sessions (revoke). */
export function Team() {
  return (
    <section>
      <PageTitle>Team</PageTitle>
      <TeamTabs current="people" />
      <Members />
      <SessionList />
      <Sessions />
    </section>
  );
}

function Members() {
  const [members, reload] = useLoad(async () => (await accounts.listMembers({})).data?.members ?? []);
  const [email, setEmail] = useState("");
  const [role, setRole] = useState("operator");
  const [invitation, setInvitation] = useState<Invitation | undefined>();
  const a = useAction();
  const invite = (e: Event) => {
    e.preventDefault();
    void a.run(async () => {
      const r = await accounts.inviteMember({ email, role });
      setInvitation(r.data);
      setEmail("");
      reload();
    });
  };
  const change = (m: Member, next: string) =>
    void a.run(async () => {
      await accounts.updateMember({ memberId: m.memberId, role: next });
      reload();
    });
  const remove = (m: Member) =>
    void a.run(async () => {
      if (!confirm(`Remove ${m.email} from the team?`)) return;
      await accounts.removeMember({ memberId: m.memberId });
      reload();
    });
  return (
    <div class="card">
      <h2>Members</h2>
      <form class="inline-form" onSubmit={invite}>
        <TextField label="E-mail" id="invite-email" type="email" required value={email} onValue={setEmail} />
        <Field label="Role" id="invite-role">
          <select id="invite-role" value={role} onChange={(e) => setRole(e.currentTarget.value)}>
            <option value="operator">Operator (inbox only)</option>
            <option value="admin">Admin (everything)</option>
          </select>
        </Field>
        <button type="submit" class="button button--primary" disabled={a.busy}>
          Invite
        </button>
      </form>
      {invitation && (
        <section class="secret" aria-label="Invitation link">
          <p>
            Send this link to {invitation.member?.email}. It works once, until {when(invitation.invitationExpiresAt)}.
          </p>
          <SecretRow value={invitation.invitationUrl} testId="invitation-url" copyLabel="Copy link" />
        </section>
      )}
      {a.error !== undefined && <ErrorNote error={a.error} />}
      {members.state === "loading" && <Loading what="the members" />}
      {members.state === "error" && <ErrorNote error={members.error} onRetry={reload} />}
      {members.state === "ok" && members.data.length === 0 && <Empty>No members.</Empty>}
      {members.state === "ok" && members.data.length > 0 && (
        <DataTable caption="Members" columns={["E-mail", "Role", "Status", "Added"]} actions>
          {members.data.map((m) => (
            <tr key={m.memberId}>
              <td data-label="E-mail">
                {m.email} {m.owner && <span class="badge">owner</span>}
              </td>
              <td data-label="Role">
                {m.owner ? (
                  m.role
                ) : (
                  <select
                    aria-label={`Role of ${m.email}`}
                    value={m.role}
                    disabled={a.busy}
                    onChange={(e) => change(m, e.currentTarget.value)}
                  >
                    <option value="operator">operator</option>
                    <option value="admin">admin</option>
                  </select>
                )}
              </td>
              <td data-label="Status">
                <span class={`badge badge--${m.status}`}>{m.status}</span>
              </td>
              <td data-label="Added">{when(m.createdAt)}</td>
              <td>
                {!m.owner && (
                  <RowAction label={`Remove ${m.email}`} busy={a.busy} onClick={() => remove(m)}>
                    Remove
                  </RowAction>
                )}
              </td>
            </tr>
          ))}
        </DataTable>
      )}
    </div>
  );
}

function Sessions() {
  const [chatbots] = useLoad(async () => (await accounts.listChatbots({})).data?.chatbots ?? []);
  const [chatbotId, setChatbotId] = useState("");
  const [userId, setUserId] = useState("");
  const [done, setDone] = useState<number | undefined>();
  const a = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    setDone(undefined);
    void a.run(async () => {
      if (!chatbotId && !userId) throw new Error("Choose a chatbot, a customer's user id, or both.");
      const r = await accounts.revokeSessions({ chatbotId, userId });
      setDone(r.data?.revoked ?? 0);
    });
  };
  return (
    <form class="card" onSubmit={submit}>
      <h2>Sessions</h2>
      <p class="muted">
        End customers' sessions: their refresh tokens stop working, so the frame asks your server for a new session.
      </p>
      <div class="inline-form">
        <Field label="Chatbot" id="sessions-chatbot">
          <select id="sessions-chatbot" value={chatbotId} onChange={(e) => setChatbotId(e.currentTarget.value)}>
            <option value="">Any chatbot</option>
            <ChatbotOptions chatbots={chatbots} />
          </select>
        </Field>
        <TextField label="Customer's user id" id="sessions-user" value={userId} onValue={setUserId} />
        <button type="submit" class="button button--danger" disabled={a.busy}>
          Revoke sessions
        </button>
      </div>
      {a.error !== undefined && <ErrorNote error={a.error} />}
      {done !== undefined && (
        <p class="state state--ok" role="status">
          {done === 1 ? "1 session ended." : `${done} sessions ended.`}
        </p>
      )}
    </form>
  );
}

/** The latest sessions (every refresh token is one), each revocable on its own. */
function SessionList() {
  const [list, reload] = useLoad(async () => (await sessions.listSessions({ limit: 20 })).data?.sessions ?? []);
  const a = useAction();
  const revoke = (sessionId: string) =>
    void a.run(async () => {
      await sessions.revokeSession({ sessionId });
      reload();
    });
  return (
    <div class="card">
      <h2>Latest sessions</h2>
      {list.state === "loading" && <Loading what="the sessions" />}
      {list.state === "error" && <ErrorNote error={list.error} onRetry={reload} />}
      {list.state === "ok" && list.data.length === 0 && (
        <Empty>No customer has a session yet: one starts when your server asks for their tokens.</Empty>
      )}
      {list.state === "ok" && list.data.length > 0 && (
        <DataTable caption="Customers' sessions, newest first" columns={["Customer", "Last used", "Status"]} actions>
          {list.data.map((r) => (
            <tr key={r.sessionId}>
              <td data-label="Customer">{r.userId}</td>
              <td data-label="Last used">{when(r.lastUsedAt)}</td>
              <td data-label="Status">{r.status}</td>
              <td>
                {r.status === "active" && (
                  <RowAction
                    label={`Revoke the session of ${r.userId}`}
                    busy={a.busy}
                    onClick={() => revoke(r.sessionId)}
                  >
                    Revoke
                  </RowAction>
                )}
              </td>
            </tr>
          ))}
        </DataTable>
      )}
      {a.error !== undefined && <ErrorNote error={a.error} />}
    </div>
  );
}
