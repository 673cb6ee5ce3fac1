import type { FrameApi } from "./api.js";
import { f, T } from "./strings.js";
import type { ChatView } from "./view.js";

const LABELS = [T.r1, T.r2, T.r3, T.r4, T.r5];

/**
 * "How did it go?": offered in the log once a conversation closes (or is found closed and unrated); one score from 1
 * to 5 and an optional comment, sent once; the customer can skip it by writing again (which reopens the chat).
 */
export class RatingPrompt {
  private offered = new Set<string>();

  constructor(
    private readonly view: ChatView,
    private readonly api: FrameApi,
    private readonly onError: (e: unknown) => void,
  ) {}

  offer(conversationId: string, afterOrder: number): void {
    if (this.offered.has(conversationId)) return;
    this.offered.add(conversationId);
    const li = document.createElement("li");
    li.className = "msg msg--event rating";
    const form = document.createElement("form");
    const set = document.createElement("fieldset");
    const legend = document.createElement("legend");
    legend.textContent = T.ratingPrompt;
    set.append(legend);
    const scores = document.createElement("div");
    scores.className = "rating__scores";
    for (let score = 1; score <= 5; score++) {
      const label = document.createElement("label");
      const input = document.createElement("input");
      input.type = "radio";
      input.name = `rating-${conversationId}`;
      input.value = String(score);
      input.required = true;
      label.append(input, ` ${score.toLocaleString(document.documentElement.lang)} · ${LABELS[score - 1]}`);
      scores.append(label);
    }
    const comment = document.createElement("textarea");
    comment.maxLength = 1000;
    comment.rows = 2;
    comment.placeholder = T.commentPlaceholder;
    comment.setAttribute("aria-label", T.commentLabel);
    const send = document.createElement("button");
    send.type = "submit";
    send.textContent = T.sendRating;
    set.append(scores, comment, send);
    form.append(set);
    li.append(form);
    form.addEventListener("submit", (ev) => {
      ev.preventDefault();
      const picked = form.querySelector<HTMLInputElement>("input:checked");
      if (!picked) return;
      send.disabled = true;
      this.api.rate(conversationId, Number(picked.value), comment.value).then(
        () => li.replaceChildren(f(T.thanks, { score: picked.value })),
        (e: unknown) => {
          send.disabled = false;
          this.onError(e);
        },
      );
    });
    this.view.addItem(li, afterOrder);
  }
}
