import { useState } from "preact/hooks";
import { mail } from "../api.js";
import { ActionError, ErrorNote, Loading, PageTitle, useAction, useLoad, when } from "../ui.js";

/** E-mail (admins): whether the service has a relay, and the account's outbox: mails waiting, failed, the last error. */
export function MailPage() {
  const [status, reload] = useLoad(async () => (await mail.getMailStatus({})).data);
  return (
    <section>
      <PageTitle>E-mail</PageTitle>
      <div class="card" data-testid="mail-status">
        <h2>Outbox</h2>
        {status.state === "loading" && <Loading what="the outbox" />}
        {status.state === "error" && <ErrorNote error={status.error} onRetry={reload} />}
        {status.state === "ok" && status.data && (
          <>
            {!status.data.relayConfigured && (
              <p class="notice" role="status">
                No SMTP relay is configured (AIAGENT_SMTP_URL): nothing is e-mailed, neither replies to customers who
                left nor transcripts nor invitations.
              </p>
            )}
            <dl class="contact-panel__fields">
              <div>
                <dt>Waiting to be sent</dt>
                <dd data-testid="mail-pending">{status.data.pending}</dd>
              </div>
              <div>
                <dt>Failed (every retry)</dt>
                <dd data-testid="mail-failed">{status.data.failed}</dd>
              </div>
              <div>
                <dt>Last error</dt>
                <dd data-testid="mail-last-error">
                  {status.data.lastError ? (
                    <>
                      {status.data.lastError} <span class="muted">({when(status.data.lastErrorAt)})</span>
                    </>
                  ) : (
                    <span class="muted">none</span>
                  )}
                </dd>
              </div>
            </dl>
            <button type="button" class="button" onClick={reload}>
              Refresh
            </button>
          </>
        )}
      </div>
    </section>
  );
}

/** "E-mail a transcript" of the conversation shown, to the contact's address (none: the button says why). */
export function TranscriptButton(props: { conversationId: string; email: string }) {
  const a = useAction();
  const [sent, setSent] = useState("");
  const send = () =>
    void a.run(async () => {
      setSent("");
      const r = await mail.sendTranscript({ conversationId: props.conversationId });
      setSent(r.data?.recipient ?? "");
    });
  return (
    <div class="transcript">
      <button type="button" class="button" disabled={a.busy || !props.email} onClick={send}>
        E-mail a transcript
      </button>
      {!props.email && <span class="muted"> The contact has no e-mail address.</span>}
      {sent && (
        <span role="status" data-testid="transcript-sent">
          {" "}
          Transcript queued to {sent}.
        </span>
      )}
      {a.error !== undefined && <ActionError error={a.error} />}
    </div>
  );
}
