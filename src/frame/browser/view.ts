import type { ChatMessage } from "./api.js";
import { f, LANG, T } from "./strings.js";

/** The kinds of notice the frame shows above the conversation. */
export type NoticeKind = "offline" | "error" | "expired";

/** How a screen reader hears who wrote a message. */
const SAID: Record<string, string> = { user: T.youSaid, assistant: T.assistantSaid, operator: T.operatorSaid };

export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  className: string,
  text?: string,
): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  e.className = className;
  if (text !== undefined) e.textContent = text;
  return e;
}

function safeUrl(url: string): string | undefined {
  try {
    const u = new URL(url);
    // Only web links: a cited document must never become a javascript: link.
    return u.protocol === "https:" || u.protocol === "http:" ? u.href : undefined;
  } catch {
    return undefined;
  }
}

function timeOf(iso: string): HTMLTimeElement | undefined {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return undefined;
  const t = el("time", "msg__time", d.toLocaleTimeString(LANG, { hour: "2-digit", minute: "2-digit" }));
  t.dateTime = iso;
  return t;
}

/** A picture served by the chat service; removed if it fails to load (the initial or the name shows instead). */
function picture(src: string, alt = ""): HTMLImageElement {
  const img = el("img", "pic");
  img.alt = alt;
  img.referrerPolicy = "no-referrer";
  img.addEventListener("error", () => img.remove());
  img.src = src;
  return img;
}

/** Who answers as a person: their name and the address of their picture ("" when none). */
export interface Operator {
  name: string;
  picture: string;
}

/** A reply being written: text grows as it streams, then becomes the stored message or an error. */
export interface ReplyHandle {
  append(text: string): void;
  /** Shows a short line while the agent looks something up (its next text or the reply clears it). */
  lookingUp(): void;
  finish(m: ChatMessage): void;
  /** Shows the failure in the reply's place, with a button (`action`) that asks again. */
  fail(message: string, action?: { label: string; run: () => void }): void;
  remove(): void;
}

/** The chat's DOM: the conversation log, the composer and one notice line. Text only, never HTML. */
export class ChatView {
  readonly form = document.getElementById("composer") as HTMLFormElement;
  readonly input = document.getElementById("input") as HTMLTextAreaElement;
  private readonly sendButton = document.getElementById("send") as HTMLButtonElement;
  private readonly log = document.getElementById("log") as HTMLOListElement;
  private readonly empty = document.getElementById("empty") as HTMLElement;
  private readonly notice = document.getElementById("notice") as HTMLElement;
  private readonly noticeText = document.getElementById("notice-text") as HTMLElement;
  private readonly noticeAction = document.getElementById("notice-action") as HTMLButtonElement;
  private readonly title = document.getElementById("title") as HTMLElement;
  private readonly subtitle = document.getElementById("subtitle") as HTMLElement;
  private readonly avatar = document.getElementById("avatar") as HTMLElement;
  private readonly inputLabel = document.querySelector('label[for="input"]') as HTMLLabelElement;
  private noticeKind: NoticeKind | undefined;
  /** Shown on operators' messages as they are added. */
  private operator: Operator | undefined;
  private noticeRun: (() => void) | undefined;
  /** Adds what a message shows beside its text (its files: attach.ts) to its bubble. */
  decorate: (bubble: HTMLElement, m: ChatMessage) => void = () => {};

  /** The agent (its name and its picture's address, "" when none): beside its messages and in the header. */
  constructor(private readonly agent: Operator = { name: "", picture: "" }) {
    if (agent.picture) this.avatar.append(picture(agent.picture, agent.name));
    this.noticeAction.addEventListener("click", () => this.noticeRun?.());
    this.input.addEventListener("input", () => this.autosize());
  }

  /** Shows a conversation's stored messages, replacing what is shown. */
  render(messages: ChatMessage[]): void {
    this.log.replaceChildren(...messages.map((m) => this.messageItem(m)));
    this.empty.hidden = messages.length > 0;
    this.scrollToEnd(true);
  }

  /** Shows the user's message at once, before the service has stored it. */
  addPending(text: string): HTMLLIElement {
    const li = this.messageItem({
      message_id: "",
      conversation_id: "",
      content: text,
      created_at: "",
      message_order: 0,
      role: "user",
    });
    li.classList.add("msg--pending");
    this.log.append(li);
    this.empty.hidden = true;
    this.scrollToEnd(true);
    return li;
  }

  /** The pending message was stored (the live stream may have shown it already). */
  confirm(li: HTMLLIElement, m: ChatMessage): void {
    if (this.has(m.message_id)) li.remove();
    else li.replaceWith(this.messageItem(m));
  }

  /** Whether a stored message is shown. */
  has(messageId: string): boolean {
    return this.log.querySelector(`[data-message-id="${CSS.escape(messageId)}"]`) !== null;
  }

  /** Shows a message that arrived live, in message_order, once; pending and typing items stay last. */
  upsert(m: ChatMessage): void {
    if (this.has(m.message_id)) return;
    const follow = this.atEnd();
    this.insertOrdered(this.messageItem(m), m.message_order);
    this.empty.hidden = true;
    this.scrollToEnd(follow);
  }

  /** A line about the conversation itself (who joined, closed…), placed after message `afterOrder`. */
  addEvent(text: string, afterOrder: number, pic = ""): void {
    const li = el("li", "msg msg--event", text);
    if (pic) li.prepend(picture(pic));
    this.addItem(li, afterOrder);
  }

  /** Any item of the log (a rating prompt), placed after message `afterOrder`. */
  addItem(li: HTMLLIElement, afterOrder: number): void {
    const follow = this.atEnd();
    this.insertOrdered(li, afterOrder + 0.5);
    this.empty.hidden = true;
    this.scrollToEnd(follow);
  }

  /** Who answers, in the header: the assistant's name, or the person who took over. */
  setAnswerer(title: string, subtitle: string, operator?: Operator): void {
    this.title.textContent = title;
    this.subtitle.textContent = subtitle;
    this.avatar.textContent = [...title.trim()][0]?.toUpperCase() ?? "?";
    const pic = operator ? operator.picture : this.agent.picture;
    if (pic) this.avatar.append(picture(pic, title));
    this.operator = operator;
  }

  /** Names who the composer writes to (its label): the assistant, or the person who took the conversation over. */
  setRecipient(name: string): void {
    this.inputLabel.textContent = f(T.messageTo, { name });
  }

  /** Removes a message that was never stored. */
  drop(li: HTMLLIElement): void {
    li.remove();
    this.empty.hidden = this.log.children.length > 0;
  }

  /** Starts the agent's reply: a typing indicator that turns into streamed text. */
  startReply(): ReplyHandle {
    const li = el("li", "msg msg--assistant msg--typing");
    li.append(el("span", "sr-only", T.assistantTyping));
    const bubble = el("div", "msg__bubble");
    bubble.dir = "auto";
    li.append(bubble);
    this.log.append(li);
    this.log.setAttribute("aria-busy", "true");
    this.scrollToEnd(true);
    let text = "";
    const done = () => this.log.setAttribute("aria-busy", "false");
    let activity: HTMLElement | undefined;
    return {
      lookingUp: () => {
        if (activity) return;
        activity = el("div", "msg__activity", T.lookingUp);
        activity.setAttribute("role", "status");
        li.append(activity);
        this.scrollToEnd(this.atEnd());
      },
      append: (t) => {
        activity?.remove();
        activity = undefined;
        const follow = this.atEnd();
        if (text === "") {
          li.classList.remove("msg--typing");
          li.replaceChildren(el("span", "sr-only", T.assistantSaid), bubble);
        }
        text += t;
        bubble.textContent = text;
        this.scrollToEnd(follow);
      },
      finish: (m) => {
        const follow = this.atEnd();
        if (this.has(m.message_id)) li.remove();
        else li.replaceWith(this.messageItem(m));
        done();
        this.scrollToEnd(follow);
      },
      fail: (message, action) => {
        const follow = this.atEnd();
        li.className = "msg msg--error";
        li.replaceChildren(el("span", "sr-only", T.error), el("div", "msg__bubble", message));
        if (action) {
          const retry = el("button", "msg__retry", action.label);
          retry.type = "button";
          retry.addEventListener("click", () => action.run());
          li.append(retry);
        }
        li.setAttribute("role", "alert");
        done();
        this.scrollToEnd(follow);
      },
      remove: () => {
        li.remove();
        done();
      },
    };
  }

  /** Shows one notice (offline, error, expired session), with an optional action button. */
  showNotice(kind: NoticeKind, text: string, action?: { label: string; run: () => void }): void {
    this.noticeKind = kind;
    this.notice.dataset.kind = kind;
    this.noticeText.textContent = text;
    this.noticeRun = action?.run;
    this.noticeAction.hidden = !action;
    this.noticeAction.textContent = action?.label ?? "";
    this.notice.hidden = false;
  }

  /** Hides the notice (only if it is of the given kind, when one is given). */
  hideNotice(kind?: NoticeKind): void {
    if (kind !== undefined && this.noticeKind !== kind) return;
    this.noticeKind = undefined;
    this.notice.hidden = true;
    this.noticeText.textContent = "";
  }

  /** Which notice is shown. */
  get notices(): NoticeKind | undefined {
    return this.noticeKind;
  }

  /** Enables or disables sending (while loading, sending, offline or expired). */
  setCanSend(can: boolean): void {
    this.sendButton.disabled = !can;
    this.form.setAttribute("aria-disabled", String(!can));
  }

  private insertOrdered(li: HTMLLIElement, order: number): void {
    li.dataset.order = String(order);
    // Before the first item that comes later, or that is not stored yet (pending, typing): those stay last.
    for (const c of Array.from(this.log.children)) {
      const o = (c as HTMLElement).dataset.order;
      if (o === undefined || Number(o) > order) {
        this.log.insertBefore(li, c);
        return;
      }
    }
    this.log.append(li);
  }

  private messageItem(m: ChatMessage): HTMLLIElement {
    const role = m.role && SAID[m.role] ? m.role : "assistant";
    const li = el("li", `msg msg--${role}`);
    if (m.message_id) li.dataset.messageId = m.message_id;
    if (m.message_order > 0) li.dataset.order = String(m.message_order);
    // The agent's picture alone names it (its alt text): "Ava said:".
    const agent = role === "assistant" && this.agent.picture ? this.agent : undefined;
    const op = role === "operator" ? this.operator : agent;
    if (op) {
      const who = el("div", "msg__who", agent ? undefined : op.name);
      if (op.picture) who.prepend(picture(op.picture, agent ? op.name : ""));
      li.append(who, el("span", "sr-only", T.said));
    } else li.append(el("span", "sr-only", SAID[role]));
    // Each message runs in its own text's direction: an English question reads right in an Arabic frame.
    const bubble = el("div", "msg__bubble", m.content);
    bubble.dir = "auto";
    this.decorate(bubble, m);
    li.append(bubble);
    const docs = (m.documents ?? [])
      .map((d) => ({ title: d.title || d.url, url: safeUrl(d.url) }))
      .filter((d) => d.url !== undefined);
    if (docs.length > 0) {
      const sources = el("div", "msg__sources");
      sources.append(el("span", "msg__sources-label", T.sources));
      const list = el("ul", "msg__sources-list");
      for (const d of docs) {
        const a = el("a", "msg__source", d.title);
        a.href = d.url!;
        a.target = "_blank";
        a.rel = "noopener noreferrer";
        const item = el("li", "");
        item.append(a);
        list.append(item);
      }
      sources.append(list);
      li.append(sources);
    }
    const t = m.created_at ? timeOf(m.created_at) : undefined;
    if (t) li.append(t);
    return li;
  }

  private autosize(): void {
    this.input.style.height = "auto";
    this.input.style.height = `${Math.min(this.input.scrollHeight, 160)}px`;
  }

  /**
   * Whether the reader is at (or near) the end of the log. Asked before a message is added: measured after, a tall
   * message would itself push the end out of reach and the log would stop following (issue 31, item 1).
   */
  private atEnd(): boolean {
    return this.log.scrollHeight - this.log.scrollTop - this.log.clientHeight < 80;
  }

  /** Scrolls to the end when `follow` (the reader was there, or their own message was added). */
  private scrollToEnd(follow: boolean): void {
    if (follow) this.log.scrollTop = this.log.scrollHeight;
  }
}
