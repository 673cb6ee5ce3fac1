import type { ChatMessage, FrameApi } from "./api.js";
import { T } from "./strings.js";
import type { ChatView } from "./view.js";

/**
 * Files in the frame (docs/attachments.md): the composer's attach button and images pasted into the message box. Each
 * file is sent as a message of its own, shown at once with a preview (an image's own pixels) and the upload's
 * progress (a moving bar); a refused file is taken away and the service's reason shown (`failed`). Stored files show in their
 * message: images inline, other files as a link that downloads them.
 */
export function attachments(
  view: ChatView,
  api: FrameApi,
  conversation: () => string | undefined,
  can: () => boolean,
  stored: (m: ChatMessage) => void,
  failed: (e: unknown) => void,
): void {
  view.decorate = (bubble, m) => {
    for (const a of m.attachments ?? []) {
      const link = document.createElement("a");
      link.href = api.url(a.url);
      link.target = "_blank";
      link.append(a.content_type[0] === "i" ? image(link.href, a.name) : a.name);
      bubble.append(link);
    }
  };
  const picker = document.createElement("input");
  picker.type = "file";
  picker.accept = "image/*,.pdf,.txt";
  picker.onchange = () => {
    for (const f of picker.files!) void send(f);
    picker.value = "";
  };
  const button = document.createElement("button");
  button.type = "button";
  button.title = button.ariaLabel = T.attach;
  button.textContent = "+";
  button.onclick = () => picker.click();
  view.input.addEventListener("paste", (e) => {
    for (const f of e.clipboardData!.files) if (f.type[0] === "i") void send(f);
  });
  view.form.prepend(picker, button);

  function send(file: File): void {
    if (!can()) return;
    const r = new FileReader();
    r.onload = async () => {
      const data = String(r.result);
      const pending = view.addPending(file.name);
      const bubble = pending.lastElementChild!;
      if (file.type[0] === "i") bubble.replaceChildren(image(data, file.name));
      // Moving until the file is stored: fetch cannot tell how much of a body was sent, and XMLHttpRequest (which
      // can) did not fit the frame's size budget.
      bubble.append(document.createElement("progress"));
      try {
        const m = await api.upload(conversation(), file.name, data);
        stored(m);
        view.confirm(pending, m);
      } catch (e) {
        view.drop(pending);
        failed(e);
      }
    };
    r.readAsDataURL(file);
  }
}

function image(src: string, alt: string): HTMLImageElement {
  const img = document.createElement("img");
  img.alt = alt;
  img.src = src;
  return img;
}
