import { useState } from "preact/hooks";
import type { ConversationSummary } from "../../../../gen/aiagent/v1/conversation_service_pb.js";
import { accounts, conversations } from "../api.js";
import { useLoad } from "../ui.js";

/**
 * An admin hands the conversation to a teammate (TakeOverConversation with their e-mail): the team's active people
 * other than the one holding it. Operators cannot list the team, so they take over only for themselves.
 */
export function AssignTo(props: {
  conversationId: string;
  assignedTo: string;
  busy: boolean;
  act: (fn: () => Promise<{ data?: ConversationSummary | undefined }>) => void;
}) {
  const [members] = useLoad(async () => (await accounts.listMembers({})).data?.members ?? []);
  const [chosen, setChosen] = useState("");
  if (members.state !== "ok") return null;
  const others = members.data.filter((m) => m.status === "active" && m.email !== props.assignedTo);
  if (others.length === 0) return null;
  const to = chosen || others[0]!.email;
  return (
    <span class="assign">
      <label for="assign-to" class="sr-only">
        Assign to
      </label>
      <select id="assign-to" value={to} onChange={(e) => setChosen(e.currentTarget.value)}>
        {others.map((m) => (
          <option key={m.memberId} value={m.email}>
            {m.email}
          </option>
        ))}
      </select>
      <button
        type="button"
        class="button"
        disabled={props.busy}
        onClick={() =>
          props.act(() =>
            conversations.takeOverConversation({ conversationId: props.conversationId, operatorEmail: to }),
          )
        }
      >
        Assign
      </button>
    </span>
  );
}
