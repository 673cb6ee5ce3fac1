import { useContext, useEffect, useState } from "preact/hooks";
import type { Viewing } from "../../../gen/aiagent/v1/conversation_service_pb.js";
import { conversations } from "./api.js";
import { SessionContext } from "./session.js";

/** Dispatched on window for each viewing signal of the account's watch stream (see live.ts). */
export const VIEWING_EVENT = "aiagent:viewing";
/** While a conversation is open, the console says so this often (the service shows it 15 s after the last). */
const SEND_EVERY_MS = 5000;

/** Tells the page's open conversation that someone opened or left it. */
export function announceViewing(v: Viewing): void {
  dispatchEvent(new CustomEvent<Viewing>(VIEWING_EVENT, { detail: v }));
}

/**
 * "Bea is viewing" above an open conversation while another person of the account has it open too (any instance:
 * the signals go through the service), gone when they leave or after their signals stop; and this console's own
 * signals, sent while the conversation is open and once more, as leaving, when it closes.
 */
export function OthersViewing({ conversationId }: { conversationId: string }) {
  const me = useContext(SessionContext)?.account.callerEmail ?? "";
  const [others, setOthers] = useState<Map<string, { name: string; until: number }>>(new Map());
  useEffect(() => {
    setOthers(new Map());
    const seen = new Set<string>();
    // Best effort: a lost signal only leaves a name unshown for a moment.
    const send = (leaving: boolean) => conversations.sendViewing({ conversationId, leaving }).catch(() => undefined);
    void send(false);
    const every = setInterval(() => void send(false), SEND_EVERY_MS);
    const leave = () => void send(true);
    addEventListener("pagehide", leave);
    const on = (e: Event) => {
      const v = (e as CustomEvent<Viewing>).detail;
      if (v.conversationId !== conversationId || v.email === me) return;
      // Someone new: say we are here too, so they see us without waiting for our next signal.
      if (!v.left && !seen.has(v.email)) void send(false);
      if (v.left) seen.delete(v.email);
      else seen.add(v.email);
      setOthers((was) => {
        const next = new Map(was);
        if (v.left) next.delete(v.email);
        else next.set(v.email, { name: v.name || v.email, until: Date.now() + (v.expiresInMs || 15_000) });
        return next;
      });
    };
    addEventListener(VIEWING_EVENT, on);
    // Those whose signals stopped (a closed tab, a lost network) go after their time.
    const sweep = setInterval(
      () =>
        setOthers((was) => {
          const now = Date.now();
          const next = new Map([...was].filter(([, o]) => o.until > now));
          return next.size === was.size ? was : next;
        }),
      1000,
    );
    return () => {
      clearInterval(every);
      clearInterval(sweep);
      removeEventListener(VIEWING_EVENT, on);
      removeEventListener("pagehide", leave);
      leave();
    };
  }, [conversationId, me]);
  const names = [...others.values()].map((o) => o.name).sort();
  return (
    <p class="viewing muted" role="status" data-testid="others-viewing">
      {names.length === 0 ? "" : `${names.join(", ")} ${names.length === 1 ? "is" : "are"} viewing`}
    </p>
  );
}
