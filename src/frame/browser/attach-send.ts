import type { ChatMessage } from "./api.js";
import type { AttachContext } from "./attach.js";

/**
 * Sends one file as a message of its own: shown at once with a preview (an image's own pixels) and the upload's
 * progress (a moving bar), stored once no message is being sent (`free`); a refused file is taken away and the service's reason shown (`failed`). Loaded on demand
 * (the first file picked or pasted), not with the frame's first script.
 */
export function sendFile(c: AttachContext, file: File): void {
  const { view } = c;
  const r = new FileReader();
  r.onload = async () => {
    const data = String(r.result);
    const pending = view.addPending(file.name);
    const bubble = pending.lastElementChild!;
    if (file.type[0] === "i") {
      // The preview (as attach.ts's image(), not imported from it: see MailKit in mail-prompt.ts).
      const img = document.createElement("img");
      img.alt = file.name;
      img.src = data;
      bubble.replaceChildren(img);
    }
    // Moving until the file is stored: fetch cannot tell how much of a body was sent, and XMLHttpRequest (which
    // can) did not fit the frame's size budget.
    bubble.append(document.createElement("progress"));
    try {
      await c.free();
      const body = { conversation_id: c.conversation(), file_name: file.name, file: data.split(",")[1] };
      const m = ((await c.api.call("POST", "/ai_agent/send_attachment", body)) as { data: ChatMessage }).data;
      c.stored(m);
      view.confirm(pending, m);
    } catch (e) {
      view.drop(pending);
      c.failed(e);
    }
  };
  r.readAsDataURL(file);
}
