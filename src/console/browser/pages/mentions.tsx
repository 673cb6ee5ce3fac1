import { useEffect, useState } from "preact/hooks";
import { accounts } from "../api.js";
import { ActionError, Empty, ErrorNote, Loading, PageTitle, useAction, useLoad, when } from "../ui.js";

/** Told when the person's mentions may have changed (a note arrived, or they were read): the menu's count looks again. */
export const MENTIONS_CHANGED = "aiagent:mentions";

/**
 * The notes that mention the signed-in person, newest first. Opening the page marks them read (as Chatwoot's and
 * Intercom's mentions do); those unread until then stay marked "New" while the page is open. The person also
 * chooses here whether a mention is e-mailed to them.
 */
export function MentionsPage() {
  const [list, reload] = useLoad(async () => (await accounts.listMyMentions({ limit: 100 })).data);
  const [emailAlerts, setEmailAlerts] = useState<boolean | undefined>();
  const a = useAction();
  useEffect(() => {
    if (list.state !== "ok" || !list.data) return;
    setEmailAlerts((v) => v ?? list.data!.emailAlerts);
    if (list.data.unread === 0) return;
    accounts.markMentionsRead({ noteIds: [] }).then(
      () => dispatchEvent(new Event(MENTIONS_CHANGED)),
      () => undefined,
    );
  }, [list]);
  useEffect(() => {
    const again = () => reload();
    addEventListener(MENTIONS_CHANGED, again);
    return () => removeEventListener(MENTIONS_CHANGED, again);
  }, []);
  const toggle = (on: boolean) =>
    void a.run(async () => {
      const r = await accounts.setMentionAlerts({ emailAlerts: on });
      setEmailAlerts(r.data?.emailAlerts ?? on);
    });
  return (
    <section>
      <PageTitle>Mentions</PageTitle>
      <div class="card">
        <p class="field">
          <label class="check">
            <input
              type="checkbox"
              id="mention-email"
              checked={emailAlerts ?? true}
              disabled={emailAlerts === undefined || a.busy}
              onChange={(e) => toggle(e.currentTarget.checked)}
            />{" "}
            E-mail me when a teammate mentions me in a note
          </label>
        </p>
        <ActionError error={a.error} />
      </div>
      <div class="card">
        <h2>Notes that mention you</h2>
        {list.state === "loading" && <Loading what="mentions" />}
        {list.state === "error" && <ErrorNote error={list.error} onRetry={reload} />}
        {list.state === "ok" && (list.data?.mentions.length ?? 0) === 0 && <Empty>No one has mentioned you yet.</Empty>}
        {list.state === "ok" && list.data && list.data.mentions.length > 0 && (
          <ol class="mentions" aria-label="Mentions" data-testid="mentions">
            {list.data.mentions.map((m) => (
              <li key={m.noteId} class={`mention ${m.read ? "" : "mention--unread"}`} data-testid="mention">
                <div>
                  <strong>{m.authorName}</strong> <time dateTime={m.createdAt}>{when(m.createdAt)}</time>
                  {!m.read && <span class="badge badge--personal"> New</span>}
                </div>
                <p class="mention__text">{m.content}</p>
              </li>
            ))}
          </ol>
        )}
      </div>
    </section>
  );
}
