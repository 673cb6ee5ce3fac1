import { useState } from "preact/hooks";
import type { SavedReply } from "../../../../gen/aiagent/v1/account_service_pb.js";
import { accounts } from "../api.js";
import { DataTable, RowAction } from "../table.js";
import { ActionError, Empty, ErrorNote, Field, Loading, PageTitle, useAction, useLoad } from "../ui.js";

/** The account's saved replies (admins): add, change, remove. Everyone picks them in the inbox's reply box with /. */
export function SavedRepliesPage() {
  const [list, reload] = useLoad(async () => (await accounts.listSavedReplies({})).data?.savedReplies ?? []);
  const [editing, setEditing] = useState<SavedReply | undefined>();
  const [shortcut, setShortcut] = useState("");
  const [content, setContent] = useState("");
  const a = useAction();
  const reset = () => {
    setEditing(undefined);
    setShortcut("");
    setContent("");
  };
  const save = (e: Event) => {
    e.preventDefault();
    void a.run(async () => {
      if (editing) await accounts.updateSavedReply({ savedReplyId: editing.savedReplyId, shortcut, content });
      else await accounts.createSavedReply({ shortcut, content });
      reset();
      reload();
    });
  };
  const edit = (r: SavedReply) => {
    setEditing(r);
    setShortcut(r.shortcut);
    setContent(r.content);
  };
  const remove = (r: SavedReply) =>
    void a.run(async () => {
      if (!confirm(`Remove the saved reply /${r.shortcut}?`)) return;
      await accounts.deleteSavedReply({ savedReplyId: r.savedReplyId });
      reload();
    });
  return (
    <section>
      <PageTitle>Saved replies</PageTitle>
      <div class="card">
        <h2>{editing ? `Change /${editing.shortcut}` : "Add a saved reply"}</h2>
        <p class="muted">In the inbox's reply box, type / and part of the shortcut to pick one.</p>
        <form onSubmit={save}>
          <Field label="Shortcut" id="saved-shortcut" hint="Letters, digits, - and _; unique in the account.">
            <input
              id="saved-shortcut"
              required
              maxLength={40}
              pattern="[A-Za-z0-9_\-]+"
              value={shortcut}
              onInput={(e) => setShortcut(e.currentTarget.value)}
            />
          </Field>
          <Field label="Text" id="saved-content">
            <textarea
              id="saved-content"
              required
              rows={3}
              value={content}
              onInput={(e) => setContent(e.currentTarget.value)}
            />
          </Field>
          <div class="actions">
            <button type="submit" class="button button--primary" disabled={a.busy}>
              {editing ? "Save changes" : "Add saved reply"}
            </button>
            {editing && (
              <button type="button" class="button" onClick={reset}>
                Cancel
              </button>
            )}
          </div>
        </form>
        <ActionError error={a.error} />
      </div>
      <div class="card">
        <h2>The account's saved replies</h2>
        {list.state === "loading" && <Loading what="saved replies" />}
        {list.state === "error" && <ErrorNote error={list.error} onRetry={reload} />}
        {list.state === "ok" && list.data.length === 0 && <Empty>No saved replies yet.</Empty>}
        {list.state === "ok" && list.data.length > 0 && (
          <DataTable caption="Saved replies, by shortcut" columns={["Shortcut", "Text"]} actions testId="saved-replies">
            {list.data.map((r) => (
              <tr key={r.savedReplyId}>
                <td data-label="Shortcut">/{r.shortcut}</td>
                <td data-label="Text">{r.content}</td>
                <td>
                  <button type="button" class="button" onClick={() => edit(r)} aria-label={`Change /${r.shortcut}`}>
                    Change
                  </button>{" "}
                  <RowAction label={`Remove /${r.shortcut}`} busy={a.busy} onClick={() => remove(r)}>
                    Remove
                  </RowAction>
                </td>
              </tr>
            ))}
          </DataTable>
        )}
      </div>
    </section>
  );
}
