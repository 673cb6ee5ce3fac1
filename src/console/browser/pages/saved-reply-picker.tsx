import { useEffect, useState } from "preact/hooks";
import type { SavedReply } from "../../../../gen/aiagent/v1/account_service_pb.js";
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
 * Tab (or a click) fills the reply with the one chosen, Escape closes it. Enter without the list sends.
 */
export function ReplyBox(props: {
  id: string;
  value: string;
  onInput: (v: string) => void;
  onSend: (e: Event) => void;
  disabled: boolean;
  placeholder: string;
}) {
  const [all, setAll] = useState<SavedReply[]>([]);
  const [active, setActive] = useState(0);
  const [closed, setClosed] = useState(false);
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
    props.onInput(r.content);
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
              <span class="picker__shortcut">/{r.shortcut}</span> {r.content}
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
        aria-describedby={`${props.id}-hint`}
        onInput={(e) => {
          setClosed(false);
          setActive(0);
          props.onInput(e.currentTarget.value);
        }}
        onKeyDown={onKeyDown}
      />
      <span id={`${props.id}-hint`} class="sr-only">
        Type / to choose a saved reply.
      </span>
    </div>
  );
}
