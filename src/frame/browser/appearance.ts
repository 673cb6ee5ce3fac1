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

/** When the team is back, in the visitor's language and the team's time zone. */
function awayText(until: string, timeZone: string | undefined): string {
  const help = "The assistant can help now, and a person will follow up when the team is back.";
  if (!until) return `Our team is away. ${help}`;
  const when = new Intl.DateTimeFormat(undefined, {
    weekday: "long",
    hour: "numeric",
    minute: "2-digit",
    timeZoneName: "short",
    ...(timeZone ? { timeZone } : {}),
  }).format(new Date(until));
  return `Our team is away until ${when}. ${help}`;
}

/**
 * Folds the away line once a person of the team has answered: the customer has a person now, and the line would
 * keep taking the top of a small frame from the conversation.
 */
export function foldAway(): void {
  const away = document.getElementById("away") as HTMLElement | null;
  if (away && !away.hidden) away.hidden = true;
}
