import type { Message, WatchAccountResponse } from "../../../gen/aiagent/v1/conversation_service_pb.js";
import { conversations } from "./api.js";

/** The person's choices, kept in this browser (preferences only: no credential is ever stored in it). */
const DESKTOP_KEY = "aiagent.alerts.desktop";
const SOUND_KEY = "aiagent.alerts.sound";
const BASE_TITLE = "aiagent console";

export const alertSettings = {
  get desktop(): boolean {
    return localStorage.getItem(DESKTOP_KEY) === "on";
  },
  set desktop(on: boolean) {
    localStorage.setItem(DESKTOP_KEY, on ? "on" : "off");
  },
  get sound(): boolean {
    return localStorage.getItem(SOUND_KEY) === "on";
  },
  set sound(on: boolean) {
    localStorage.setItem(SOUND_KEY, on ? "on" : "off");
  },
};

let audio: AudioContext | undefined;

/** Prepares the sound; call from a user gesture (browsers start audio only after one). */
export function unlockSound(): void {
  audio ??= new AudioContext();
  void audio.resume();
}

/** A short two-tone chime, made on the spot (no file to fetch: the console's CSP loads no media). */
export function chime(): void {
  if (!audio) return;
  const now = audio.currentTime;
  for (const [i, f] of [880, 1320].entries()) {
    const osc = audio.createOscillator();
    const gain = audio.createGain();
    osc.frequency.value = f;
    gain.gain.setValueAtTime(0.0001, now + i * 0.12);
    gain.gain.exponentialRampToValueAtTime(0.2, now + i * 0.12 + 0.02);
    gain.gain.exponentialRampToValueAtTime(0.0001, now + i * 0.12 + 0.25);
    osc.connect(gain).connect(audio.destination);
    osc.start(now + i * 0.12);
    osc.stop(now + i * 0.12 + 0.3);
  }
}

/**
 * What a new customer message does in the console: for a conversation held by the signed-in person or by nobody
 * (the AI agent), a desktop notification and a chime when turned on, and "(N) Inbox" in the tab's title until the
 * conversation is read.
 */
export class Alerts {
  /** Who holds each conversation seen (ai_agent: nobody). */
  private readonly holders = new Map<string, string>();
  /** New customer messages per conversation, until it is read. */
  private readonly unread = new Map<string, number>();

  constructor(
    private readonly me: string,
    private readonly accountEmail: string,
  ) {}

  async event(e: WatchAccountResponse["event"]): Promise<void> {
    if (e.case === "conversation") {
      this.holders.set(e.value.conversationId, e.value.assignedTo);
      if (e.value.unreadMessageCount === "0") this.unread.delete(e.value.conversationId);
      this.title();
    } else if (e.case === "message" && e.value.role === "user") {
      const holder = await this.holder(e.value.conversationId);
      if (holder !== "ai_agent" && holder !== this.me) return;
      this.unread.set(e.value.conversationId, (this.unread.get(e.value.conversationId) ?? 0) + 1);
      this.title();
      this.notify(e.value);
    }
  }

  /** Leaves the title as it was. */
  stop(): void {
    document.title = BASE_TITLE;
  }

  private title(): void {
    let n = 0;
    for (const c of this.unread.values()) n += c;
    document.title = n > 0 ? `(${n}) Inbox · ${BASE_TITLE}` : BASE_TITLE;
  }

  private notify(m: Message): void {
    if (alertSettings.sound) chime();
    if (!alertSettings.desktop || typeof Notification === "undefined" || Notification.permission !== "granted") return;
    const n = new Notification("New customer message", {
      body: m.content.length > 120 ? `${m.content.slice(0, 119)}…` : m.content,
      tag: m.conversationId,
    });
    n.onclick = () => {
      focus();
      n.close();
    };
  }

  /** Who holds the conversation: as last seen live, else as the inbox lists it (a new one is the AI agent's). */
  private async holder(conversationId: string): Promise<string> {
    const known = this.holders.get(conversationId);
    if (known !== undefined) return known;
    try {
      const r = await conversations.getContactConversations({ userEmailId: this.accountEmail, limit: 100 });
      for (const c of r.data?.data?.contacts ?? []) this.holders.set(c.latestConversationId, c.assignedTo);
    } catch {
      // Unknown: treated as the AI agent's, so nobody misses it.
    }
    return this.holders.get(conversationId) ?? "ai_agent";
  }
}
