import type { FrameApi } from "./api.js";
import type { MailPrompt } from "./mail-prompt.js";
import { f, T } from "./strings.js";
import { el } from "./view.js";

/**
 * The e-mail line's place above the composer and its "E-mail me a transcript" button, in the frame's first script.
 * The prompt itself (mail-prompt.ts) is a chunk loaded when it is needed: at once when the away line shows, else when
 * the button is first used. Returns what tells it the conversation shown (undefined before the first message).
 */
export function mailLine(api: FrameApi, away: boolean): (conversationId: string | undefined) => void {
  const box = el("div", "mail");
  const send = el("button", "mail__send", T.mSend);
  send.type = "button";
  send.hidden = true;
  box.append(send);
  document.getElementById("composer")?.before(box);
  let shown: string | undefined;
  let prompt: Promise<MailPrompt> | undefined;
  // A chunk that could not be loaded is asked for again next time.
  const use = (run: (p: MailPrompt) => unknown) =>
    void (prompt ??= import("./mail-prompt.js").then((m) => m.mailPrompt(api, away, box, { T, f, el }))).then(
      run,
      () => {
        prompt = undefined;
      },
    );
  send.onclick = () =>
    use(async (p) => {
      await p.show(shown);
      await p.transcript();
    });
  return (id) => {
    shown = id;
    send.hidden = !id;
    if (away || prompt) use((p) => p.show(id));
  };
}
