import type { ChatMessage, FrameApi } from "./api.js";
import { T } from "./strings.js";
import type { ChatView } from "./view.js";

/** What sending a file needs from the frame; the sending itself (attach-send.ts) loads when a file is first given. */
export interface AttachContext {
  view: ChatView;
  api: FrameApi;
  conversation: () => string | undefined;
  /** Whether a file can go now or once the message being sent is stored and answered (`free`). */
  can: () => boolean;
  /** Resolves when no message is being sent: a file given during a send goes after it, into its conversation. */
  free: () => Promise<void>;
  stored: (m: ChatMessage) => void;
  failed: (e: unknown) => void;
}

/**
 * Files in the frame (docs/attachments.md): the composer's attach button and images pasted into the message box. Each
 * file is sent as a message of its own (attach-send.ts, a chunk loaded on the first file, so it costs the first paint
 * nothing). Stored files show in their message: images inline, other files as a link that downloads them. A file given
 * while a message is being sent shows at once and is sent when that send ends (never dropped, never a second
 * conversation).
 */
export function attachments(c: AttachContext): void {
  c.view.decorate = (bubble, m) => {
    for (const a of m.attachments ?? []) {
      const link = document.createElement("a");
      link.href = c.api.url(a.url);
      link.target = "_blank";
      link.append(a.content_type[0] === "i" ? image(link.href, a.name) : a.name);
      bubble.append(link);
    }
  };
  const send = (file: File) => {
    if (c.can()) void import("./attach-send.js").then((m) => m.sendFile(c, file), c.failed);
  };
  const picker = document.createElement("input");
  picker.type = "file";
  picker.accept = "image/*,.pdf,.txt";
  picker.onchange = () => {
    for (const f of picker.files!) send(f);
    picker.value = "";
  };
  const button = document.createElement("button");
  button.type = "button";
  button.title = button.ariaLabel = T.attach;
  button.textContent = "+";
  button.onclick = () => picker.click();
  c.view.input.addEventListener("paste", (e) => {
    for (const f of e.clipboardData!.files) if (f.type[0] === "i") send(f);
  });
  c.view.form.prepend(picker, button);
}

function image(src: string, alt: string): HTMLImageElement {
  const img = document.createElement("img");
  img.alt = alt;
  img.src = src;
  return img;
}
