import { useEffect, useRef, useState } from "preact/hooks";
import type { Note } from "../../../../gen/aiagent/v1/conversation_service_pb.js";
import { conversations } from "../api.js";
import { ActionError, ErrorNote, useAction, when } from "../ui.js";

/**
 * The conversation's internal notes: shown apart from the messages (dashed, amber, "only your team") and never
 * sent to the customer. New notes of any teammate arrive live (`live`, from the account's watch).
 */
export function NotesPanel(props: { conversationId: string; live: Note | undefined; n: number }) {
  const id = props.conversationId;
  const [notes, setNotes] = useState<Note[] | undefined>();
  const [loadError, setLoadError] = useState<unknown>();
  const [text, setText] = useState("");
  const a = useAction();
  const end = useRef<HTMLLIElement>(null);
  const add = (n: Note) => setNotes((ns) => (ns && !ns.some((x) => x.noteId === n.noteId) ? [...ns, n] : ns));

  const load = () => {
    setLoadError(undefined);
    conversations.listConversationNotes({ conversationId: id }).then(
      (r) => setNotes(r.data?.notes ?? []),
      (e: unknown) => setLoadError(e),
    );
  };
  useEffect(load, [id]);
  useEffect(() => {
    if (props.live && props.live.conversationId === id) add(props.live);
  }, [props.n]);
  useEffect(() => end.current?.scrollIntoView({ block: "nearest" }), [notes?.length]);

  const submit = (e: Event) => {
    e.preventDefault();
    const content = text.trim();
    if (!content) return;
    void a.run(async () => {
      const r = await conversations.addConversationNote({ conversationId: id, content });
      setText("");
      if (r.data) add(r.data);
    });
  };
  return (
    <section class="notes" aria-labelledby={`notes-${id}`}>
      <h3 id={`notes-${id}`}>Internal notes</h3>
      <p class="notes__hint">Only your team sees these; the customer never does.</p>
      {loadError !== undefined && <ErrorNote error={loadError} onRetry={load} />}
      {notes && notes.length > 0 && (
        <ol aria-label="Internal notes" aria-live="polite">
          {notes.map((n, i) => (
            <li key={n.noteId} class="note" data-testid="note" ref={i === notes.length - 1 ? end : undefined}>
              <div class="note__head">
                <strong>{n.authorEmail}</strong> <time dateTime={n.createdAt}>{when(n.createdAt)}</time>
              </div>
              <p class="note__text">{n.content}</p>
            </li>
          ))}
        </ol>
      )}
      <form class="note-form" onSubmit={submit}>
        <label for={`note-${id}`} class="sr-only">
          Write an internal note
        </label>
        <textarea
          id={`note-${id}`}
          rows={1}
          placeholder="Note for your team (the customer does not see it)…"
          value={text}
          onInput={(e) => setText(e.currentTarget.value)}
        />
        <button type="submit" class="button" disabled={a.busy || !text.trim()}>
          Add note
        </button>
      </form>
      <ActionError error={a.error} />
    </section>
  );
}
