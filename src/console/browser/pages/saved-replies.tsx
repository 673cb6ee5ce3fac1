import { useContext, useState } from "preact/hooks";
import type { SavedReply } from "../../../../gen/aiagent/v1/account_service_pb.js";
import { REPLY_VARIABLES, unknownVariables } from "../../../domain/account/reply-variables.js";
import { accounts } from "../api.js";
import { SessionContext } from "../session.js";
import { DataTable, RowAction } from "../table.js";
import { ActionError, Empty, ErrorNote, Field, Loading, PageTitle, useAction, useLoad } from "../ui.js";

/**
 * Saved replies: every person adds, changes and removes their own (personal) ones; admins also the account's shared
 * ones. Everyone picks both in the inbox's reply box with /. Unknown variables are flagged as the text is written.
 */
export function SavedRepliesPage() {
  const admin = useContext(SessionContext)?.admin ?? false;
  const [list, reload] = useLoad(async () => (await accounts.listSavedReplies({})).data?.savedReplies ?? []);
  const [editing, setEditing] = useState<SavedReply | undefined>();
  const [shortcut, setShortcut] = useState("");
  const [content, setContent] = useState("");
  const [personal, setPersonal] = useState(!admin);
  const unknown = unknownVariables(content);
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
      else await accounts.createSavedReply({ shortcut, content, personal: personal || !admin });
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
        <p class="muted">
          In the inbox's reply box, type / and part of the shortcut to pick one. Variables are filled in when it is
          inserted: {REPLY_VARIABLES.map((v) => `{{${v}}}`).join(", ")}; a fallback for an empty value may follow a bar,
          as in {'{{contact.name | fallback: "there"}}'}.
        </p>
        <form onSubmit={save}>
          {!editing && admin && (
            <div class="field">
              <label class="check">
                <input
                  type="checkbox"
                  id="saved-personal"
                  checked={personal}
                  onChange={(e) => setPersonal(e.currentTarget.checked)}
                />{" "}
                Personal: only you see and use it (otherwise the whole team shares it)
              </label>
            </div>
          )}
          {!editing && !admin && <p class="muted">Your saved replies are personal: only you see and use them.</p>}
          <Field
            label="Shortcut"
            id="saved-shortcut"
            hint="Letters, digits, - and _; unique among the shared ones, or among your own."
          >
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
              aria-describedby="saved-variables"
              onInput={(e) => setContent(e.currentTarget.value)}
            />
          </Field>
          <p id="saved-variables" class={unknown.length > 0 ? "warning" : "sr-only"} role="status">
            {unknown.length > 0 &&
              `Unknown variable${unknown.length > 1 ? "s" : ""}: ${unknown.map((v) => `{{${v}}}`).join(", ")}. ` +
                "It will be left as written."}
          </p>
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
        <h2>{admin ? "The account's saved replies, and yours" : "Your saved replies, and the team's"}</h2>
        {list.state === "loading" && <Loading what="saved replies" />}
        {list.state === "error" && <ErrorNote error={list.error} onRetry={reload} />}
        {list.state === "ok" && list.data.length === 0 && <Empty>No saved replies yet.</Empty>}
        {list.state === "ok" && list.data.length > 0 && (
          <DataTable
            caption="Saved replies, by shortcut"
            columns={["Shortcut", "Whose", "Text"]}
            actions
            testId="saved-replies"
          >
            {list.data.map((r) => (
              <tr key={r.savedReplyId}>
                <td data-label="Shortcut">/{r.shortcut}</td>
                <td data-label="Whose">
                  <span class={`badge badge--${r.personal ? "personal" : "shared"}`}>
                    {r.personal ? "Yours" : "Shared"}
                  </span>
                </td>
                <td data-label="Text">{r.content}</td>
                <td>
                  {(r.personal || admin) && (
                    <>
                      <button
                        type="button"
                        class="button"
                        onClick={() => edit(r)}
                        aria-label={`Change /${r.shortcut}${r.personal ? " (yours)" : ""}`}
                      >
                        Change
                      </button>{" "}
                      <RowAction
                        label={`Remove /${r.shortcut}${r.personal ? " (yours)" : ""}`}
                        busy={a.busy}
                        onClick={() => remove(r)}
                      >
                        Remove
                      </RowAction>
                    </>
                  )}
                </td>
              </tr>
            ))}
          </DataTable>
        )}
      </div>
    </section>
  );
}
