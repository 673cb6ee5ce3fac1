import { webhooks } from "../api.js";
import { DataTable } from "../table.js";
import { Empty, ErrorNote, Loading, useAction, useLoad, when } from "../ui.js";

/** One endpoint's latest deliveries, newest first, each sent again on request. */
export function Deliveries({ endpointId }: { endpointId: string }) {
  const [list, reload] = useLoad(
    async () => (await webhooks.listWebhookDeliveries({ endpointId, limit: 20 })).data?.deliveries ?? [],
    [endpointId],
  );
  const a = useAction();
  const resend = (deliveryId: string) =>
    void a.run(async () => {
      await webhooks.resendWebhookDelivery({ endpointId, deliveryId });
      reload();
    });
  if (list.state === "loading") return <Loading what="deliveries" />;
  if (list.state === "error") return <ErrorNote error={list.error} onRetry={reload} />;
  if (list.data.length === 0) return <Empty>No deliveries yet.</Empty>;
  return (
    <DataTable
      caption="Deliveries, newest first"
      columns={["Event", "Status", "Attempts", "Last answer"]}
      actions
      testId="webhook-deliveries"
      after={a.error !== undefined && <ErrorNote error={a.error} />}
    >
      {list.data.map((d) => (
        <tr key={d.deliveryId}>
          <td data-label="Event">
            {d.eventType} <span class="muted">{when(d.createdAt)}</span>
          </td>
          <td data-label="Status">{d.status}</td>
          <td data-label="Attempts">{d.attempts}</td>
          <td data-label="Last answer">
            {d.lastResponseCode ? `HTTP ${d.lastResponseCode}` : ""} {d.lastError}
          </td>
          <td>
            <button type="button" class="button" disabled={a.busy} onClick={() => resend(d.deliveryId)}>
              Resend
            </button>
          </td>
        </tr>
      ))}
    </DataTable>
  );
}
