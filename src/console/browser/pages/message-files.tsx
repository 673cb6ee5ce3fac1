import type { Attachment, Message } from "../../../../gen/aiagent/v1/conversation_service_pb.js";
import { conversations } from "../api.js";

/**
 * The files sent with a message (docs/attachments.md): images inline, each a link to the file at its full size;
 * other files as a link that downloads them (the service serves them as downloads, in a sandbox).
 */
export function MessageFiles({ files }: { files: Attachment[] }) {
  if (files.length === 0) return null;
  return (
    <ul class="message__files" aria-label="Files">
      {files.map((f) => (
        <li key={f.attachmentId}>
          <a href={f.url} target="_blank" rel="noopener noreferrer" title={f.name}>
            {f.contentType.startsWith("image/") ? (
              <img src={f.url} alt={f.name} width={f.width} height={f.height} class="message__image" />
            ) : (
              `${f.name} (${Math.max(1, Math.round(f.size / 1024))} KB)`
            )}
          </a>
        </li>
      ))}
    </ul>
  );
}

/**
 * The operator's file (a return label, a photo): sent as a message of its own with what is typed as its caption,
 * through the same checks as the customer's (type by content, size cap, images re-encoded without metadata).
 */
export function AttachFile(props: {
  conversationId: string;
  caption: string;
  disabled: boolean;
  /** Runs the upload as the page's other actions run (busy state, the service's reason on refusal). */
  run: (fn: () => Promise<void>) => void;
  onSent: (m: Message) => void;
}) {
  const pick = (e: Event) => {
    const input = e.currentTarget as HTMLInputElement;
    const file = input.files?.[0];
    input.value = "";
    if (!file) return;
    props.run(async () => {
      const r = await conversations.replyWithAttachment({
        conversationId: props.conversationId,
        fileName: file.name,
        file: new Uint8Array(await file.arrayBuffer()),
        content: props.caption.trim(),
        idempotencyKey: crypto.randomUUID(),
      });
      if (r.data) props.onSent(r.data);
    });
  };
  return (
    <label class="button" aria-disabled={props.disabled}>
      Attach a file
      <input type="file" class="sr-only" disabled={props.disabled} onChange={pick} />
    </label>
  );
}
