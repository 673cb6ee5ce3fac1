import { useEffect, useState } from "preact/hooks";
import type { ToolApproval } from "../../../../gen/aiagent/v1/agent_service_pb.js";
import { agents } from "../api.js";
import { ActionError, ErrorNote, useAction, when } from "../ui.js";

/**
 * The agent's tool calls that wait for a person of the team: the tool's name and the arguments the model gave (shown
 * here only, never to the customer), with Approve and Refuse. Read again whenever the conversation's messages change
 * (`version`): a reply that asks for approval, or the reply after a decision.
 */
export function ApprovalsPanel(props: { conversationId: string; version: number }) {
  const id = props.conversationId;
  const [waiting, setWaiting] = useState<ToolApproval[]>([]);
  const [loadError, setLoadError] = useState<unknown>();
  const a = useAction();
  const load = () => {
    setLoadError(undefined);
    agents.listToolApprovals({ conversationId: id }).then(
      (r) => setWaiting((r.data?.approvals ?? []).filter((x) => x.status === "pending")),
      (e: unknown) => setLoadError(e),
    );
  };
  useEffect(load, [id, props.version]);
  const decide = (x: ToolApproval, decision: "approve" | "refuse") =>
    void a.run(async () => {
      await agents.decideToolApproval({ conversationId: id, callId: x.callId, decision });
      // The agent's reply after the decision arrives with the conversation's other messages (live).
      setWaiting((w) => w.filter((y) => y.callId !== x.callId));
    });
  if (loadError !== undefined) return <ErrorNote error={loadError} onRetry={load} />;
  if (waiting.length === 0) return null;
  return (
    <section class="approvals" aria-labelledby={`approvals-${id}`}>
      <h3 id={`approvals-${id}`}>Waiting for your approval</h3>
      <ul>
        {waiting.map((x) => (
          <li key={x.callId} class="approval" data-testid="approval">
            <div>
              The AI agent wants to call <strong>{x.toolName}</strong>{" "}
              <time dateTime={x.createdAt}>{when(x.createdAt)}</time>
            </div>
            <pre class="approval__arguments">{pretty(x.arguments)}</pre>
            <button type="button" class="button button--primary" disabled={a.busy} onClick={() => decide(x, "approve")}>
              Approve
            </button>{" "}
            <button type="button" class="button" disabled={a.busy} onClick={() => decide(x, "refuse")}>
              Refuse
            </button>
          </li>
        ))}
      </ul>
      <ActionError error={a.error} />
    </section>
  );
}

function pretty(args: string): string {
  try {
    return JSON.stringify(JSON.parse(args), null, 2);
  } catch {
    return args;
  }
}
