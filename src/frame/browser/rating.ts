import type { FrameApi } from "./api.js";
import type { MailKit } from "./mail-prompt.js";
import type { ChatView } from "./view.js";

/** The conversations offered a rating in this page. */
const offered = new Set<string>();

/**
 * "How did it go?": offered in the log once a conversation closes (or is found closed and unrated); one score from 1
 * to 5 and an optional comment, sent once; the customer can skip it by writing again (which reopens the chat).
 * A chunk of its own, loaded when a closed conversation is first shown (main.ts); what it uses of the first script is
 * given to it (see MailKit).
 */
export function offerRating(
  view: ChatView,
  api: FrameApi,
  onError: (e: unknown) => void,
  { T, f }: Pick<MailKit, "T" | "f">,
  conversationId: string,
  afterOrder: number,
): void {
  if (offered.has(conversationId)) return;
  offered.add(conversationId);
  const labels = [T.r1, T.r2, T.r3, T.r4, T.r5];
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
    label.append(input, ` ${score.toLocaleString(document.documentElement.lang)} · ${labels[score - 1]}`);
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
    const body = { conversation_id: conversationId, score: Number(picked.value), comment: comment.value };
    api.call("POST", "/ai_agent/rate_conversation", body).then(
      () => li.replaceChildren(f(T.thanks, { score: picked.value })),
      (e: unknown) => {
        send.disabled = false;
        onError(e);
      },
    );
  });
  view.addItem(li, afterOrder);
}
