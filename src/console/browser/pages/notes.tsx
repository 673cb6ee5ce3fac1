import { useEffect, useRef, useState } from "preact/hooks";
import type { MentionablePerson } from "../../../../gen/aiagent/v1/account_service_pb.js";
import type { Note } from "../../../../gen/aiagent/v1/conversation_service_pb.js";
import { accounts, conversations } from "../api.js";
import { ActionError, ErrorNote, useAction, when } from "../ui.js";

/**
 * The conversation's internal notes: shown apart from the messages (dashed, amber, "only your team") and never
 * sent to the customer. New notes of any teammate arrive live (`live`, from the account's watch). Typing "@" and part
 * of a teammate's name suggests them (↑ ↓, Enter or Tab, or a click); the people still named "@Name" in the text
 * when it is added are mentioned, and notified.
 */
export function NotesPanel(props: { conversationId: string; live: Note | undefined; n: number }) {
  const id = props.conversationId;
  const [notes, setNotes] = useState<Note[] | undefined>();
  const [loadError, setLoadError] = useState<unknown>();
  const [text, setText] = useState("");
  const a = useAction();
  const end = useRef<HTMLLIElement>(null);
  const [people, setPeople] = useState<MentionablePerson[]>([]);
  const [active, setActive] = useState(0);
  useEffect(() => {
    accounts.listMentionablePeople({}).then(
      (r) => setPeople(r.data?.people ?? []),
      () => setPeople([]),
    );
  }, []);
  const asked = /(?:^|\s)@([^\s@]*)$/.exec(text);
  const suggested = asked
    ? people.filter((p) => p.displayName.toLowerCase().startsWith(asked[1]!.toLowerCase())).slice(0, 8)
    : [];
  const nameOf = (memberId: string) => people.find((p) => p.memberId === memberId)?.displayName ?? "someone";
  // A note's author by display name (issue 45), their e-mail until the people are read or when they left.
  const authorName = (email: string) =>
    people.find((p) => p.email.toLowerCase() === email.toLowerCase())?.displayName || email;
  const pick = (p: MentionablePerson) => {
    setText((t) => t.replace(/@[^\s@]*$/, `@${p.displayName} `));
    setActive(0);
  };
  const onKeyDown = (e: KeyboardEvent) => {
    if (suggested.length === 0) return;
    if (e.key === "ArrowDown" || e.key === "ArrowUp") {
      e.preventDefault();
      const step = e.key === "ArrowDown" ? 1 : -1;
      setActive((i) => (i + step + suggested.length) % suggested.length);
    } else if (e.key === "Enter" || e.key === "Tab") {
      e.preventDefault();
      pick(suggested[Math.min(active, suggested.length - 1)]!);
    }
  };
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
      // The people named "@Name" in the text (longest names first, so "@Ann Lee" is not read as "@Ann").
      const named = [...people]
        .sort((x, y) => y.displayName.length - x.displayName.length)
        .filter((p) => p.displayName !== "" && content.includes(`@${p.displayName}`));
      const mentionMemberIds = [...new Set(named.map((p) => p.memberId))];
      const r = await conversations.addConversationNote({ conversationId: id, content, mentionMemberIds });
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
                <strong data-testid="note-author">{authorName(n.authorEmail)}</strong>{" "}
                <time dateTime={n.createdAt}>{when(n.createdAt)}</time>
              </div>
              <p class="note__text">{n.content}</p>
              {n.mentionedMemberIds.length > 0 && (
                <p class="note__mentions" data-testid="note-mentions">
                  Mentions: {n.mentionedMemberIds.map(nameOf).join(", ")}
                </p>
              )}
            </li>
          ))}
        </ol>
      )}
      <form class="note-form" onSubmit={submit}>
        <label for={`note-${id}`} class="sr-only">
          Write an internal note
        </label>
        {suggested.length > 0 && (
          <div class="picker" id={`note-${id}-people`} role="listbox" aria-label="Mention a teammate">
            {suggested.map((p, i) => (
              <div
                key={p.memberId}
                id={`note-${id}-person-${i}`}
                role="option"
                tabIndex={-1}
                aria-selected={i === active}
                onMouseDown={(e) => {
                  e.preventDefault();
                  pick(p);
                }}
              >
                @{p.displayName} <span class="picker__whose">{p.email}</span>
              </div>
            ))}
          </div>
        )}
        <textarea
          id={`note-${id}`}
          rows={1}
          placeholder="Note for your team (the customer does not see it); @ mentions a teammate…"
          value={text}
          aria-controls={suggested.length > 0 ? `note-${id}-people` : undefined}
          aria-activedescendant={
            suggested.length > 0 ? `note-${id}-person-${Math.min(active, suggested.length - 1)}` : undefined
          }
          onInput={(e) => {
            setActive(0);
            setText(e.currentTarget.value);
          }}
          onKeyDown={onKeyDown}
        />
        <button type="submit" class="button" disabled={a.busy || !text.trim()}>
          Add note
        </button>
      </form>
      <ActionError error={a.error} />
    </section>
  );
}
