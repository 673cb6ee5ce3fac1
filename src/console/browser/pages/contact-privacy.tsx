import { toJson } from "@bufbuild/protobuf";
import { useContext } from "preact/hooks";
import { ContactExportSchema } from "../../../../gen/aiagent/v1/privacy_pb.js";
import { accounts } from "../api.js";
import { SessionContext } from "../session.js";
import { ErrorNote, useAction } from "../ui.js";

/**
 * An admin's export and erasure of the contact shown (GDPR requests): the export downloads one JSON document; the
 * erasure asks first, then leaves the contact's view, which no longer exists.
 */
export function ContactPrivacy(props: { contactId: string; name: string; onErased: () => void }) {
  const s = useContext(SessionContext)!;
  const a = useAction();
  if (!s.admin) return null;
  const exportIt = () =>
    void a.run(async () => {
      const r = await accounts.exportContact({ contactId: props.contactId });
      if (!r.data) return;
      const blob = new Blob([JSON.stringify(toJson(ContactExportSchema, r.data), null, 2)], {
        type: "application/json",
      });
      const link = document.createElement("a");
      link.href = URL.createObjectURL(blob);
      link.download = `contact-${props.contactId}.json`;
      link.click();
      URL.revokeObjectURL(link.href);
    });
  const erase = () =>
    void a.run(async () => {
      const sure = confirm(
        `Erase ${props.name}? Their conversations, messages and sessions are deleted for good, and the event log forgets them. This cannot be undone.`,
      );
      if (!sure) return;
      await accounts.eraseContact({ contactId: props.contactId });
      props.onErased();
    });
  return (
    <>
      <button type="button" class="button" disabled={a.busy} onClick={exportIt}>
        Export data
      </button>
      <button type="button" class="button button--danger" disabled={a.busy} onClick={erase}>
        Erase contact
      </button>
      {a.error !== undefined && <ErrorNote error={a.error} />}
    </>
  );
}
