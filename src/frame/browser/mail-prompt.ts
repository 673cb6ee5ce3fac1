import { ApiError, type FrameApi } from "./api.js";
import { f, T } from "./strings.js";
import { el } from "./view.js";

/**
 * The e-mail line above the composer: when nobody of the team is online (the away line shows), it asks for the
 * customer's address, stored on their own contact so that replies written while they are gone are mailed; once a
 * conversation exists, "E-mail me a transcript" mails it to that address (asking for one first when none is known).
 */
export class MailPrompt {
  private readonly note = el("p", "mail__note");
  private readonly form = el("form", "mail__form");
  private readonly input = el("input", "mail__input");
  private readonly send = el("button", "mail__send", T.mSend);
  private email: string | undefined;
  private conversationId: string | undefined;
  /** A transcript waits for the address being asked. */
  private wanted = false;

  constructor(
    private readonly api: FrameApi,
    private readonly away: boolean,
  ) {
    const box = el("div", "mail");
    const input = this.input;
    input.type = "email";
    input.required = true;
    input.maxLength = 256;
    input.placeholder = T.mLabel;
    input.setAttribute("aria-label", T.mLabel);
    this.note.setAttribute("role", "status");
    this.send.type = "button";
    this.form.append(input, el("button", "", T.mSave));
    this.form.hidden = this.send.hidden = true;
    box.append(this.note, this.form, this.send);
    document.getElementById("composer")?.before(box);
    this.form.addEventListener("submit", (ev) => {
      ev.preventDefault();
      void this.save(input.value.trim());
    });
    this.send.addEventListener("click", () => void this.transcript());
  }

  /** The conversation shown (undefined before the first message); the first call reads the customer's address. */
  async show(conversationId: string | undefined): Promise<void> {
    this.conversationId = conversationId;
    this.send.hidden = !conversationId;
    if (this.email !== undefined) return;
    this.email = "";
    try {
      this.email = ((await this.api.call("GET", "/ai_agent/contact")) as { data: { email: string } }).data.email;
    } catch {
      // Not known: the prompt asks, and the service keeps whichever address is given.
    }
    if (!this.away) return;
    this.note.textContent = this.email ? f(T.mSaved, { email: this.email }) : T.mAsk;
    this.form.hidden = !!this.email;
  }

  private async save(email: string): Promise<void> {
    try {
      await this.api.call("POST", "/ai_agent/contact/email", { email });
      this.email = email;
      this.form.hidden = true;
      this.note.textContent = f(T.mSaved, { email });
      if (this.wanted) await this.transcript();
    } catch (e) {
      this.note.textContent = e instanceof ApiError && e.code === "invalid_argument" ? T.mBad : T.mFail;
    }
  }

  private async transcript(): Promise<void> {
    this.wanted = !this.email;
    if (this.wanted) {
      this.form.hidden = false;
      this.input.focus();
      return;
    }
    try {
      await this.api.call("POST", "/send_transcript", { conversation_id: this.conversationId });
      this.note.textContent = f(T.mSent, { email: this.email! });
    } catch {
      this.note.textContent = T.mFail;
    }
  }
}
