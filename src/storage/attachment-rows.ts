import type { StoredFile } from "../domain/conversation/repository.js";

/** A stored file's row as both back ends answer it. */
export interface FileRow {
  attachment_id: string;
  name: string;
  content_type: string;
  bytes: Buffer;
  message_id?: string;
}

export function fileOf(r: FileRow): StoredFile {
  return { attachmentId: r.attachment_id, name: r.name, contentType: r.content_type, bytes: r.bytes };
}
