import { useState } from "preact/hooks";
import type { AuditEvent } from "../../../../gen/aiagent/v1/privacy_pb.js";
// A list of names only (no Node code): the filter offers exactly the kinds the log records.
import { AUDIT_KINDS as KINDS } from "../../../domain/audit/repository.js";
import { accounts } from "../api.js";
import { DataTable } from "../table.js";
import { Empty, ErrorNote, Field, Loading, PageTitle, useAction, useLoad, when } from "../ui.js";

const PAGE = 50;

/** The account's audit log, newest first: who did what, when, from where; filtered by kind, a page at a time. */
export function AuditLog() {
  const [kind, setKind] = useState("");
  const [more, setMore] = useState<{ events: AuditEvent[]; token: string }>({ events: [], token: "" });
  const [first, reload] = useLoad(async () => {
    const r = await accounts.listAuditEvents({ kinds: kind ? [kind] : [], limit: PAGE });
    setMore({ events: [], token: r.data?.nextPageToken ?? "" });
    return r.data?.auditEvents ?? [];
  }, [kind]);
  const a = useAction();
  const next = () =>
    void a.run(async () => {
      const r = await accounts.listAuditEvents({ kinds: kind ? [kind] : [], limit: PAGE, pageToken: more.token });
      setMore({ events: [...more.events, ...(r.data?.auditEvents ?? [])], token: r.data?.nextPageToken ?? "" });
    });
  const events = first.state === "ok" ? [...first.data, ...more.events] : [];
  return (
    <section>
      <PageTitle>Audit log</PageTitle>
      <div class="card">
        <form class="inline-form" onSubmit={(e) => e.preventDefault()}>
          <Field label="Kind" id="audit-kind">
            <select id="audit-kind" value={kind} onChange={(e) => setKind(e.currentTarget.value)}>
              <option value="">Every kind</option>
              {KINDS.map((k) => (
                <option key={k} value={k}>
                  {k}
                </option>
              ))}
            </select>
          </Field>
        </form>
        {first.state === "loading" && <Loading what="the audit log" />}
        {first.state === "error" && <ErrorNote error={first.error} onRetry={reload} />}
        {first.state === "ok" && events.length === 0 && <Empty>Nothing recorded yet.</Empty>}
        {events.length > 0 && (
          <DataTable
            caption="Audit events, newest first"
            columns={["When", "What", "Who", "Target", "From"]}
            testId="audit-events"
          >
            {events.map((e) => (
              <tr key={e.auditEventId}>
                <td>{when(e.createdAt)}</td>
                <td>
                  <span class="badge">{e.kind}</span>{" "}
                  <span class="muted">
                    {Object.entries(e.details)
                      .map(([k, v]) => `${k}: ${v}`)
                      .join(", ")}
                  </span>
                </td>
                <td>{e.actor}</td>
                <td>
                  <code>{e.target}</code>
                </td>
                <td>
                  {e.address}
                  {e.userAgent && <span class="muted"> · {e.userAgent}</span>}
                </td>
              </tr>
            ))}
          </DataTable>
        )}
        {more.token && (
          <button type="button" class="button" disabled={a.busy} onClick={next}>
            Older events
          </button>
        )}
        {a.error !== undefined && <ErrorNote error={a.error} />}
      </div>
    </section>
  );
}
