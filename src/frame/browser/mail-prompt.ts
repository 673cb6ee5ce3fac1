import type { ApiError, FrameApi } from "./api.js";
import type { f as fill, T as texts } from "./strings.js";
import type { el as make } from "./view.js";

/**
 * What the prompt uses of the first script, given to it rather than imported: a chunk that imports from the first
 * script's modules (or uses a class field, whose helper esbuild shares) makes esbuild move that code into a shared
 * chunk, which the first paint would then load as well.
 */
export interface MailKit {
  T: typeof texts;
  f: typeof fill;
  el: typeof make;
}

/** The prompt, once loaded: told the conversation shown, and asked for a transcript. */
export interface MailPrompt {
  /** The conversation shown (undefined before the first message); the first call reads the customer's address. */
  show(conversationId: string | undefined): Promise<void>;
  /** "E-mail me a transcript": mails it, or asks for the address first. */
  transcript(): Promise<void>;
}

/**
 * The e-mail line above the composer: when nobody of the team is online (the away line shows), it asks for the
 * customer's address, stored on their own contact so that replies written while they are gone are mailed; once a
 * conversation exists, "E-mail me a transcript" mails it to that address (asking for one first when none is known).
 * A chunk loaded on demand (mail.ts): when the away line shows, or when the transcript button is first used.
 * `box` holds the transcript button (made by mail.ts); the note and the address's form go before it.
 */
export function mailPrompt(api: FrameApi, away: boolean, box: HTMLElement, { T, f, el }: MailKit): MailPrompt {
  const note = el("p", "mail__note");
  const form = el("form", "mail__form");
  const input = el("input", "mail__input");
  let email: string | undefined;
  let conversationId: string | undefined;
  /** A transcript waits for the address being asked. */
  let wanted = false;

  input.type = "email";
  input.required = true;
  input.maxLength = 256;
  input.placeholder = T.mLabel;
  input.setAttribute("aria-label", T.mLabel);
  note.setAttribute("role", "status");
  form.append(input, el("button", "", T.mSave));
  form.hidden = true;
  box.prepend(note, form);
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    void save(input.value.trim());
  });

  async function show(id: string | undefined): Promise<void> {
    conversationId = id;
    if (email !== undefined) return;
    email = "";
    try {
      email = ((await api.call("GET", "/ai_agent/contact")) as { data: { email: string } }).data.email;
    } catch {
      // Not known: the prompt asks, and the service keeps whichever address is given.
    }
    if (!away) return;
    note.textContent = email ? f(T.mSaved, { email }) : T.mAsk;
    form.hidden = !!email;
  }

  async function save(address: string): Promise<void> {
    try {
      await api.call("POST", "/ai_agent/contact/email", { email: address });
      email = address;
      form.hidden = true;
      note.textContent = f(T.mSaved, { email: address });
      if (wanted) await transcript();
    } catch (e) {
      note.textContent = (e as ApiError).code === "invalid_argument" ? T.mBad : T.mFail;
    }
  }

  async function transcript(): Promise<void> {
    wanted = !email;
    if (wanted) {
      form.hidden = false;
      input.focus();
      return;
    }
    try {
      await api.call("POST", "/send_transcript", {
        conversation_id: conversationId,
        locale: document.documentElement.lang,
      });
      note.textContent = f(T.mSent, { email: email! });
    } catch {
      note.textContent = T.mFail;
    }
  }

  return { show, transcript };
}
