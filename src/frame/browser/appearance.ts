import { f, LANG, T } from "./strings.js";

/**
 * The chatbot's look and its team's absence, from the page's data attributes: the brand color goes into the
 * stylesheet's variables from here because the frame's CSP allows no inline style; the server chose the text color.
 */
export function applyAppearance(root: HTMLElement): void {
  const brand = root.dataset.brandColor;
  const text = root.dataset.brandText;
  if (brand && text) {
    const s = document.documentElement.style;
    for (const v of ["--accent", "--user"]) s.setProperty(v, brand);
    for (const v of ["--accent-fg", "--user-fg"]) s.setProperty(v, text);
  }
  const until = root.dataset.awayUntil;
  if (until === undefined) return;
  const away = document.getElementById("away") as HTMLElement;
  away.textContent = awayText(until, root.dataset.timeZone);
  away.hidden = false;
}

/** When the team is back, in the frame's language and the team's time zone (the chatbot's own words when it wrote them). */
function awayText(until: string, timeZone: string | undefined): string {
  const help = T.awayHelp ? ` ${T.awayHelp}` : "";
  if (!until) return T.away + help;
  const when = new Intl.DateTimeFormat(LANG, {
    weekday: "long",
    hour: "numeric",
    minute: "2-digit",
    timeZoneName: "short",
    ...(timeZone ? { timeZone } : {}),
  }).format(new Date(until));
  return f(T.awayUntil, { when }) + help;
}

/**
 * Folds the away line once a person of the team has answered: the customer has a person now, and the line would
 * keep taking the top of a small frame from the conversation.
 */
export function foldAway(): void {
  const away = document.getElementById("away") as HTMLElement | null;
  if (away && !away.hidden) away.hidden = true;
}
