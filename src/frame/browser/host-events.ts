/**
 * What the frame tells its host page besides asking for tokens: that a message arrived live (its author's role, never
 * its text, so a launcher can show an unread badge) and that the customer pressed Escape (a launcher closes). Sent
 * only to the host origin the service accepted for this frame; without one, nothing is sent.
 */
const NEW_MESSAGE = "[NEW_MESSAGE]";
const CLOSE = "[CLOSE]";
/** The language the service chose for the frame, so a launcher around it speaks it too. */
const LOCALE = "[LOCALE]";

export class HostEvents {
  constructor(private readonly hostOrigin: string | undefined) {}

  message(role: string): void {
    this.post({ type: NEW_MESSAGE, role });
  }

  locale(locale: string): void {
    this.post({ type: LOCALE, locale });
  }

  close(): void {
    this.post({ type: CLOSE });
  }

  private post(data: object): void {
    if (this.hostOrigin && window.parent !== window) window.parent.postMessage(data, this.hostOrigin);
  }
}
