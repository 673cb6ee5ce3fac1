import { useContext, useEffect, useState } from "preact/hooks";
import type {
  ConversationLabels as ConversationLabelsData,
  Label,
} from "../../../../gen/aiagent/v1/conversation_service_pb.js";
import { conversations } from "../api.js";
import { SessionContext } from "../session.js";
import { ActionError, useAction } from "../ui.js";
import { SnoozeBar } from "./snooze.js";

/** The account's labels, read once per mount; `reload` after one is added. */
export function useLabels(): [Label[], () => void] {
  const [labels, setLabels] = useState<Label[]>([]);
  const [n, setN] = useState(0);
  useEffect(() => {
    conversations.listLabels({}).then(
      (r) => setLabels(r.data?.labels ?? []),
      () => setLabels([]),
    );
  }, [n]);
  return [labels, () => setN((x) => x + 1)];
}

/**
 * A conversation's labels as chips, and a menu of the account's labels to put on or take off (every person);
 * admins may add a new label from it. Each change is a line of the timeline (`onChanged` reads it again).
 */
export function ConversationLabelsBar(props: { conversationId: string; onChanged: () => void }) {
  const s = useContext(SessionContext)!;
  const [labels, reload] = useLabels();
  const [on, setOn] = useState<string[]>([]);
  const [priority, setPriority] = useState("none");
  const [carried, setCarried] = useState<ConversationLabelsData | undefined>();
  const [open, setOpen] = useState(false);
  const [name, setName] = useState("");
  const a = useAction();
  useEffect(() => {
    conversations.listConversationLabels({ conversationId: props.conversationId }).then(
      (r) => {
        setOn(r.data?.labelIds ?? []);
        setPriority(r.data?.priority || "none");
        setCarried(r.data);
      },
      () => setOn([]),
    );
  }, [props.conversationId]);
  const prioritize = (p: string) =>
    a.run(async () => {
      const r = await conversations.setConversationPriority({ conversationId: props.conversationId, priority: p });
      setPriority(r.data?.priority || p);
      props.onChanged();
    });
  const put = (ids: string[]) =>
    a.run(async () => {
      const r = await conversations.setConversationLabels({ conversationId: props.conversationId, labelIds: ids });
      setOn(r.data?.labelIds ?? ids);
      props.onChanged();
    });
  const named = new Map(labels.map((l) => [l.labelId, l.name]));
  const menuId = `labels-${props.conversationId}`;
  const priorityId = `priority-${props.conversationId}`;
  return (
    <div class="labels">
      <SnoozeBar
        conversationId={props.conversationId}
        carried={carried}
        onChanged={(c) => {
          setCarried(c);
          props.onChanged();
        }}
      />
      <label for={priorityId} class="labels__priority">
        Priority
        <select
          id={priorityId}
          value={priority}
          disabled={a.busy}
          data-priority={priority}
          onChange={(e) => void prioritize(e.currentTarget.value)}
        >
          {["none", "low", "medium", "high", "urgent"].map((p) => (
            <option key={p} value={p}>
              {p === "none" ? "No priority" : p[0]!.toUpperCase() + p.slice(1)}
            </option>
          ))}
        </select>
      </label>
      <ul class="chips" aria-label="Labels">
        {on.map((id) => (
          <li key={id} class="chip" data-testid="label-chip">
            {named.get(id) ?? "…"}
          </li>
        ))}
      </ul>
      <button
        type="button"
        class="button button--quiet"
        aria-expanded={open}
        aria-controls={menuId}
        onClick={() => setOpen(!open)}
      >
        Labels
      </button>
      {open && (
        <fieldset class="labels__menu" id={menuId}>
          <legend>Labels of this conversation</legend>
          {labels.length === 0 && <p class="muted">No labels yet{s.admin ? ": add one below." : "."}</p>}
          {labels.map((l) => (
            <label key={l.labelId} class="labels__choice">
              <input
                type="checkbox"
                checked={on.includes(l.labelId)}
                disabled={a.busy}
                onChange={(e) =>
                  void put(e.currentTarget.checked ? [...on, l.labelId] : on.filter((x) => x !== l.labelId))
                }
              />
              {l.name}
            </label>
          ))}
          {s.admin && (
            <form
              class="labels__new"
              onSubmit={(e) => {
                e.preventDefault();
                void a.run(async () => {
                  await conversations.createLabel({ name });
                  setName("");
                  reload();
                });
              }}
            >
              <label for={`${menuId}-new`} class="sr-only">
                New label
              </label>
              <input
                id={`${menuId}-new`}
                placeholder="New label"
                maxLength={40}
                value={name}
                onInput={(e) => setName(e.currentTarget.value)}
              />
              <button type="submit" class="button" disabled={a.busy || name.trim() === ""}>
                Add
              </button>
            </form>
          )}
          <ActionError error={a.error} />
        </fieldset>
      )}
    </div>
  );
}
