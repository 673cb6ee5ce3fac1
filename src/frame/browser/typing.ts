import type { TypingState } from "./api.js";
import { f, T } from "./strings.js";

/** The customer's typing is told at most this often (the service passes on one signal per side per 2 s). */
const SEND_EVERY_MS = 2000;

/**
 * Typing indicators in the frame: the operator's ("Sam is typing…", under the log, until their message or
 * `expires_in_ms` of silence), and the customer's own, sent while they type in a conversation that exists.
 */
export class FrameTyping {
  private readonly line = document.getElementById("typing") as HTMLElement;
  private hideTimer: ReturnType<typeof setTimeout> | undefined;
  private lastSent = 0;

  constructor(private readonly send: () => void) {}

  /** An operator is typing. */
  shown(t: TypingState): void {
    this.line.textContent = f(T.typing, { name: t.name || T.supportTeam });
    this.line.hidden = false;
    clearTimeout(this.hideTimer);
    this.hideTimer = setTimeout(() => this.hide(), t.expires_in_ms || 5000);
  }

  /**
   * The agent looks something up for a reply that no send of this frame streams (one after a person's decision):
   * its looking-up line, until the reply arrives (or a minute passes, the longest a reply may take by default).
   */
  lookingUp(): void {
    this.line.textContent = T.lookingUp;
    this.line.hidden = false;
    clearTimeout(this.hideTimer);
    this.hideTimer = setTimeout(() => this.hide(), 60_000);
  }

  /** Their message arrived (or they left): no more indicator. */
  hide(): void {
    clearTimeout(this.hideTimer);
    this.line.hidden = true;
    this.line.textContent = "";
  }

  /** The customer typed a character. */
  typed(): void {
    const now = Date.now();
    if (now - this.lastSent < SEND_EVERY_MS) return;
    this.lastSent = now;
    this.send();
  }

  /** The customer sent their message: the next keystroke signals again at once. */
  sent(): void {
    this.lastSent = 0;
  }
}
