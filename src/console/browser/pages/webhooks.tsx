import { useState } from "preact/hooks";
import type { WebhookEndpoint } from "../../../../gen/aiagent/v1/webhook_service_pb.js";
import { EVENT_TYPES } from "../../../domain/log/event-types.js";
import { webhooks } from "../api.js";
import { Empty, ErrorNote, Field, Loading, PageTitle, SecretRow, useAction, useLoad, when } from "../ui.js";
import { Deliveries } from "./webhook-deliveries.js";

/** A secret just made (by creation or rotation): shown until the page is left, never again. */
type Shown = { endpointId: string; url: string; secret: string };

/** The account's webhook endpoints (admins): add one, see its state and deliveries, pause, rotate, remove. */
export function Webhooks() {
  const [list, reload] = useLoad(async () => (await webhooks.listWebhookEndpoints({})).data?.endpoints ?? []);
  const [shown, setShown] = useState<Shown | undefined>();
  return (
    <section>
      <PageTitle>Webhooks</PageTitle>
      <p class="muted">
        Each endpoint receives the account's events it asks for, signed with its own secret (Standard Webhooks).
      </p>
      {shown && <SecretNote shown={shown} onDone={() => setShown(undefined)} />}
      <h2>Endpoints</h2>
      {list.state === "loading" && <Loading what="endpoints" />}
      {list.state === "error" && <ErrorNote error={list.error} onRetry={reload} />}
      {list.state === "ok" && list.data.length === 0 && <Empty>No endpoints yet: add one above.</Empty>}
      {list.state === "ok" && list.data.length > 0 && (
        <ul class="endpoints">
          {list.data.map((e) => (
            <EndpointCard key={e.endpointId} e={e} onChanged={reload} onSecret={setShown} />
          ))}
        </ul>
      )}
      <NewEndpoint
        onCreated={(s) => {
          setShown(s);
          reload();
        }}
      />
    </section>
  );
}

function SecretNote({ shown, onDone }: { shown: Shown; onDone: () => void }) {
  return (
    <section class="secret" aria-label="Signing secret" data-testid="webhook-secret">
      <p>
        The signing secret of {shown.url}. Copy it now into the receiver's settings: it is shown this once and cannot be
        read again.
      </p>
      <SecretRow value={shown.secret} testId="webhook-secret-value" copyLabel="Copy the secret">
        <button type="button" class="button button--quiet" onClick={onDone}>
          Done
        </button>
      </SecretRow>
    </section>
  );
}

function NewEndpoint({ onCreated }: { onCreated: (s: Shown) => void }) {
  const [url, setUrl] = useState("");
  const [types, setTypes] = useState<string[]>([]);
  const [description, setDescription] = useState("");
  const a = useAction();
  const submit = (ev: Event) => {
    ev.preventDefault();
    void a.run(async () => {
      const r = await webhooks.createWebhookEndpoint({ url: url.trim(), eventTypes: types, description });
      if (!r.data?.endpoint) return;
      onCreated({ endpointId: r.data.endpoint.endpointId, url: r.data.endpoint.url, secret: r.data.secret });
      setUrl("");
      setTypes([]);
      setDescription("");
    });
  };
  return (
    <form class="card" onSubmit={submit} aria-labelledby="new-endpoint">
      <h2 id="new-endpoint">Add an endpoint</h2>
      <Field
        label="URL"
        id="webhook-url"
        hint="https at a public address. Outside production (NODE_ENV is not production) any address is accepted, and http on localhost too, e.g. http://127.0.0.1:9000/hook."
      >
        <input
          id="webhook-url"
          type="url"
          required
          value={url}
          aria-describedby="webhook-url-hint"
          onInput={(e) => setUrl(e.currentTarget.value)}
        />
      </Field>
      <Field label="Label (optional)" id="webhook-description">
        <input id="webhook-description" value={description} onInput={(e) => setDescription(e.currentTarget.value)} />
      </Field>
      <fieldset class="hours events">
        <legend>Events (none chosen: every event)</legend>
        {EVENT_TYPES.map((t) => (
          <label key={t} class="check">
            <input
              type="checkbox"
              checked={types.includes(t)}
              onChange={(e) => setTypes(e.currentTarget.checked ? [...types, t] : types.filter((x) => x !== t))}
            />
            {t}
          </label>
        ))}
      </fieldset>
      <button type="submit" class="button button--primary" disabled={a.busy || !url.trim()}>
        Add endpoint
      </button>
      {a.error !== undefined && <ErrorNote error={a.error} />}
    </form>
  );
}

function EndpointCard(props: { e: WebhookEndpoint; onChanged: () => void; onSecret: (s: Shown) => void }) {
  const { e } = props;
  const a = useAction();
  const [open, setOpen] = useState(false);
  const act = (fn: () => Promise<unknown>) =>
    void a.run(async () => {
      await fn();
      props.onChanged();
    });
  const rotate = () =>
    void a.run(async () => {
      if (!confirm(`Rotate the secret of ${e.url}? Deliveries are signed with the new one at once.`)) return;
      const r = await webhooks.rotateWebhookSecret({ endpointId: e.endpointId });
      if (r.data) props.onSecret({ endpointId: e.endpointId, url: e.url, secret: r.data.secret });
    });
  const remove = () => {
    if (confirm(`Delete the endpoint ${e.url}? Its deliveries not yet made are dropped.`))
      act(() => webhooks.deleteWebhookEndpoint({ endpointId: e.endpointId }));
  };
  const enabled = e.status === "enabled";
  return (
    <li class="card" data-testid="webhook-endpoint" data-endpoint-id={e.endpointId}>
      <h3 class="endpoint__url">{e.url}</h3>
      <p>
        <span class={`badge badge--${enabled ? "live" : "closed"}`} data-testid="webhook-status">
          {e.status}
        </span>{" "}
        {e.description && <span>{e.description} · </span>}
        <span class="muted">added {when(e.createdAt)}</span>
      </p>
      {e.disabledReason && <p class="warning">Disabled: {e.disabledReason}</p>}
      {e.failingSince && <p class="warning">Failing since {when(e.failingSince)}</p>}
      <p class="muted">Events: {e.eventTypes.length ? e.eventTypes.join(", ") : "every event"}</p>
      <div class="actions">
        <button
          type="button"
          class="button"
          disabled={a.busy}
          onClick={() => act(() => webhooks.updateWebhookEndpoint({ endpointId: e.endpointId, enabled: !enabled }))}
        >
          {enabled ? "Disable" : "Enable"}
        </button>
        <button type="button" class="button" disabled={a.busy} onClick={rotate}>
          Rotate secret
        </button>
        <button type="button" class="button" aria-expanded={open} onClick={() => setOpen(!open)}>
          {open ? "Hide deliveries" : "Deliveries"}
        </button>
        <button type="button" class="button button--danger" disabled={a.busy} onClick={remove}>
          Delete
        </button>
      </div>
      {a.error !== undefined && <ErrorNote error={a.error} />}
      {open && <Deliveries endpointId={e.endpointId} />}
    </li>
  );
}
