import type { Attachment } from "../../../../gen/aiagent/v1/conversation_service_pb.js";

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
