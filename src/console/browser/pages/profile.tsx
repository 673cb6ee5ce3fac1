import { useContext, useEffect, useState } from "preact/hooks";
import type { ApiKey, CreatedApiKey } from "../../../../gen/aiagent/v1/account_service_pb.js";
import { accounts } from "../api.js";
import { SessionContext } from "../session.js";
import { DataTable, RowAction } from "../table.js";
import { Empty, ErrorNote, Field, Loading, PageTitle, SecretRow, TextField, useAction, useLoad, when } from "../ui.js";
import { AlertSettings, YourPicture } from "./me.js";

/**
 * The account and its API keys (admins' Profile), and the caller's own things (everyone's My settings): their name
 * and picture in the chat, their alerts (the SLA e-mail, desktop and sound), their password.
 */
export function Profile({ own = false }: { own?: boolean }) {
  const s = useContext(SessionContext)!;
  return (
    <section>
      <PageTitle>{own ? "My settings" : "Profile"}</PageTitle>
      {!own && (
        <div class="card">
          <h2>Account</h2>
          <dl class="facts">
            <dt>Account e-mail</dt>
            <dd>{s.account.email}</dd>
            <dt>Signed in as</dt>
            <dd>
              {s.account.callerEmail} ({s.account.callerRole})
            </dd>
            <dt>Account id</dt>
            <dd>
              <code>{s.account.accountId}</code>
            </dd>
            <dt>Created</dt>
            <dd>{when(s.account.createdAt)}</dd>
          </dl>
        </div>
      )}
      {!own && <ApiKeys />}
      <YourName />
      <YourAlerts />
      <YourPicture />
      <AlertSettings />
      <ChangePassword />
    </section>
  );
}

function ApiKeys() {
  const [keys, reload] = useLoad(async () => (await accounts.listApiKeys({})).data?.apiKeys ?? []);
  const [fresh, setFresh] = useState<CreatedApiKey | undefined>();
  const [name, setName] = useState("");
  const a = useAction();
  const create = (e: Event) => {
    e.preventDefault();
    void a.run(async () => {
      const r = await accounts.createApiKey({ name });
      setFresh(r.data);
      setName("");
      reload();
    });
  };
  const rotate = () =>
    void a.run(async () => {
      if (!confirm("Make a new key? The other keys keep working for a day, then stop.")) return;
      const r = await accounts.rotateApiKeys({ name: "rotated" });
      setFresh(r.data?.created);
      reload();
    });
  const revoke = (k: ApiKey) =>
    void a.run(async () => {
      if (!confirm(`Revoke ${k.prefix}…? Servers using it stop working at once.`)) return;
      await accounts.revokeApiKey({ apiKeyId: k.apiKeyId });
      reload();
    });
  return (
    <div class="card">
      <h2>API keys</h2>
      <p class="muted">Your servers trade a key for your customers' tokens. Keep keys on servers only.</p>
      {fresh && (
        <section class="secret" aria-label="New API key">
          <p>
            <strong>Your new key.</strong> Copy it now: it is shown only once.
          </p>
          <SecretRow value={fresh.clientApiKey} testId="new-api-key" copyLabel="Copy key" />
          <button type="button" class="button button--quiet" onClick={() => setFresh(undefined)}>
            I have stored it
          </button>
        </section>
      )}
      <form class="inline-form" onSubmit={create}>
        <Field label="Label (optional)" id="key-name">
          <input id="key-name" value={name} maxLength={100} onInput={(e) => setName(e.currentTarget.value)} />
        </Field>
        <button type="submit" class="button button--primary" disabled={a.busy}>
          Create API key
        </button>
        <button type="button" class="button" disabled={a.busy} onClick={rotate}>
          Rotate keys
        </button>
      </form>
      {a.error !== undefined && <ErrorNote error={a.error} />}
      {keys.state === "loading" && <Loading what="the keys" />}
      {keys.state === "error" && <ErrorNote error={keys.error} onRetry={reload} />}
      {keys.state === "ok" && keys.data.length === 0 && <Empty>No API keys yet. Create one for your server.</Empty>}
      {keys.state === "ok" && keys.data.length > 0 && (
        <DataTable caption="API keys" columns={["Key", "Label", "Status", "Created", "Last used"]} actions>
          {keys.data.map((k) => (
            <tr key={k.apiKeyId}>
              <td data-label="Key">
                <code>{k.prefix}…</code>
              </td>
              <td data-label="Label">{k.name}</td>
              <td data-label="Status">
                <span class={`badge badge--${k.status}`}>{k.status}</span>
                {k.expiresAt && k.status === "active" && <span class="muted"> until {when(k.expiresAt)}</span>}
              </td>
              <td data-label="Created">{when(k.createdAt)}</td>
              <td data-label="Last used">{k.lastUsedAt ? when(k.lastUsedAt) : "never"}</td>
              <td>
                {k.status !== "revoked" && (
                  <RowAction label={`Revoke key ${k.prefix}`} busy={a.busy} onClick={() => revoke(k)}>
                    Revoke
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

/**
 * A form whose submit runs `save` and then says it is done, until the next submit (so an old "Saved." never stands
 * beside a new error).
 */
function useSaveForm(save: () => Promise<void>) {
  const [done, setDone] = useState(false);
  const a = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    setDone(false);
    void a.run(async () => {
      await save();
      setDone(true);
    });
  };
  return { a, done, submit };
}

/** The caller's display name and picture: what customers see when this person takes their conversation over. */
function YourName() {
  const s = useContext(SessionContext)!;
  const [name, setName] = useState(s.account.callerDisplayName);
  const { a, done, submit } = useSaveForm(async () => {
    // The picture customers see is the uploaded one (below); the stored address is passed through unchanged.
    const r = await accounts.updateMyProfile({ displayName: name, avatarUrl: s.account.callerAvatarUrl });
    if (r.data) s.update(r.data);
  });
  return (
    <form class="card" onSubmit={submit}>
      <h2>Your name in the chat</h2>
      <p class="muted">
        Customers see this name when you take their conversation over; without one they see "
        {s.account.callerEmail.split("@")[0]}".
      </p>
      <TextField
        label="Display name"
        id="display-name"
        hint="At most 60 characters."
        maxLength={60}
        autocomplete="name"
        value={name}
        onValue={setName}
      />
      {a.error !== undefined && <ErrorNote error={a.error} />}
      {done && (
        <p class="state state--ok" role="status">
          Saved.
        </p>
      )}
      <button type="submit" class="button button--primary" disabled={a.busy}>
        Save name
      </button>
    </form>
  );
}

/**
 * Where the caller wants the inbox's e-mails: the SLA alert and mentions in notes (both on by default; the mention
 * choice is the Mentions page's box too).
 */
function YourAlerts() {
  const s = useContext(SessionContext)!;
  const [sla, setSla] = useState(s.account.callerSlaBreachEmail);
  // Read from the mentions list (its `email_alerts`); unknown until then, and left as it is when not read.
  const [mentions, setMentions] = useState<boolean | undefined>();
  useEffect(() => {
    accounts.listMyMentions({ limit: 1 }).then(
      (r) => setMentions((m) => m ?? r.data?.emailAlerts ?? true),
      () => undefined,
    );
  }, []);
  const { a, done, submit } = useSaveForm(async () => {
    const r = await accounts.setMyAlerts({ slaBreachEmail: sla });
    if (r.data) s.update(r.data);
    if (mentions !== undefined) await accounts.setMentionAlerts({ emailAlerts: mentions });
  });
  return (
    <form class="card" onSubmit={submit}>
      <h2>Alerts</h2>
      <label class="check">
        <input type="checkbox" checked={sla} onChange={(e) => setSla(e.currentTarget.checked)} />
        E-mail me when a conversation I hold (or, as an admin, an unassigned one) misses its first-response SLA
      </label>
      <label class="check">
        <input
          type="checkbox"
          checked={mentions ?? true}
          disabled={mentions === undefined}
          onChange={(e) => setMentions(e.currentTarget.checked)}
        />
        E-mail me when a teammate mentions me in a note
      </label>
      {a.error !== undefined && <ErrorNote error={a.error} />}
      {done && (
        <p class="state state--ok" role="status">
          Saved.
        </p>
      )}
      <button type="submit" class="button button--primary" disabled={a.busy}>
        Save alerts
      </button>
    </form>
  );
}

function ChangePassword() {
  const [current, setCurrent] = useState("");
  const [next, setNext] = useState("");
  const { a, done, submit } = useSaveForm(async () => {
    await accounts.changePassword({ currentPassword: current, newPassword: next });
    setCurrent("");
    setNext("");
  });
  return (
    <form class="card" onSubmit={submit}>
      <h2>Change your password</h2>
      <TextField
        label="Current password"
        id="current-password"
        type="password"
        autocomplete="current-password"
        required
        value={current}
        onValue={setCurrent}
      />
      <TextField
        label="New password"
        id="change-password"
        hint="At least 8 characters."
        type="password"
        autocomplete="new-password"
        minLength={8}
        required
        value={next}
        onValue={setNext}
      />
      {a.error !== undefined && <ErrorNote error={a.error} />}
      {done && (
        <p class="state state--ok" role="status">
          Password changed.
        </p>
      )}
      <button type="submit" class="button button--primary" disabled={a.busy}>
        Change password
      </button>
    </form>
  );
}
