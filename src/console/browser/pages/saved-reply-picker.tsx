import { useEffect, useState } from "preact/hooks";
import type { SavedReply } from "../../../../gen/aiagent/v1/account_service_pb.js";
import { fillVariables, type ReplyVariable } from "../../../domain/account/reply-variables.js";
import { accounts } from "../api.js";

/** What the reply box shows: while its text is "/" and a word, the saved replies whose shortcut or text match it. */
function matching(all: SavedReply[], text: string): SavedReply[] | undefined {
  const m = /^\/(\S*)$/.exec(text);
  if (!m) return undefined;
  const q = m[1]!.toLowerCase();
  return all.filter((r) => r.shortcut.includes(q) || r.content.toLowerCase().includes(q)).slice(0, 20);
}

/**
 * The reply's text box with the saved replies: typing "/" opens a list filtered as one types; ↑ ↓ move, Enter or
 * Tab (or a click) fills the reply with the one chosen, its variables filled from `variables`; a variable left as
 * written (no value, or unknown) is named under the box until the text changes. Escape closes the list. Enter
 * without the list sends. The list shows the person's own saved replies and the shared ones, marked.
 */
export function ReplyBox(props: {
  id: string;
  value: string;
  onInput: (v: string) => void;
  onSend: (e: Event) => void;
  disabled: boolean;
  placeholder: string;
  /** The values of the saved replies' variables here: the contact's, the person's, the chatbot's. */
  variables?: Partial<Record<ReplyVariable, string>>;
}) {
  const [all, setAll] = useState<SavedReply[]>([]);
  const [active, setActive] = useState(0);
  const [closed, setClosed] = useState(false);
  const [left, setLeft] = useState<string[]>([]);
  // Read again each time the list opens: an admin may have added one since the conversation was opened.
  const opening = props.value.startsWith("/");
  useEffect(() => {
    if (!opening) return;
    accounts.listSavedReplies({}).then(
      (r) => setAll(r.data?.savedReplies ?? []),
      () => setAll([]),
    );
  }, [opening]);
  const shown = closed ? undefined : matching(all, props.value);
  const listId = `${props.id}-saved`;
  const optionId = (i: number) => `${listId}-${i}`;
  const pick = (r: SavedReply) => {
    const filled = fillVariables(r.content, props.variables ?? {});
    props.onInput(filled.text);
    setLeft([...filled.empty, ...filled.unknown]);
    setActive(0);
  };
  const onKeyDown = (e: KeyboardEvent) => {
    if (shown && shown.length > 0) {
      if (e.key === "ArrowDown" || e.key === "ArrowUp") {
        e.preventDefault();
        const step = e.key === "ArrowDown" ? 1 : -1;
        setActive((i) => (i + step + shown.length) % shown.length);
        return;
      }
      if (e.key === "Enter" || e.key === "Tab") {
        e.preventDefault();
        pick(shown[Math.min(active, shown.length - 1)]!);
        return;
      }
    }
    if (shown && e.key === "Escape") {
      e.preventDefault();
      setClosed(true);
      return;
    }
    if (e.key === "Enter" && !e.shiftKey) props.onSend(e);
  };
  return (
    <div class="reply-box">
      {shown && shown.length === 0 && (
        <p class="picker picker__empty" role="status">
          No saved reply matches.
        </p>
      )}
      {shown && shown.length > 0 && (
        <div class="picker" id={listId} role="listbox" aria-label="Saved replies">
          {shown.map((r, i) => (
            <div
              key={r.savedReplyId}
              id={optionId(i)}
              role="option"
              tabIndex={-1}
              aria-selected={i === active}
              onMouseDown={(e) => {
                // Keeps the focus in the text box.
                e.preventDefault();
                pick(r);
              }}
            >
              <span class="picker__shortcut">/{r.shortcut}</span>
              <span class="picker__whose">{r.personal ? "yours" : "shared"}</span> {r.content}
            </div>
          ))}
        </div>
      )}
      <textarea
        id={props.id}
        rows={2}
        placeholder={props.placeholder}
        disabled={props.disabled}
        value={props.value}
        aria-controls={shown && shown.length > 0 ? listId : undefined}
        aria-activedescendant={shown && shown.length > 0 ? optionId(Math.min(active, shown.length - 1)) : undefined}
        aria-describedby={`${props.id}-hint ${props.id}-left`}
        onInput={(e) => {
          setClosed(false);
          setActive(0);
          setLeft([]);
          props.onInput(e.currentTarget.value);
        }}
        onKeyDown={onKeyDown}
      />
      <p id={`${props.id}-left`} class={left.length > 0 ? "warning reply-box__warning" : "sr-only"} role="status">
        {left.length > 0 &&
          `No value for ${left.map((v) => `{{${v}}}`).join(", ")}: replace ${left.length > 1 ? "them" : "it"} before sending.`}
      </p>
      <span id={`${props.id}-hint`} class="sr-only">
        Type / to choose a saved reply.
      </span>
    </div>
  );
}
