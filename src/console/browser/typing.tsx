import { useEffect, useRef, useState } from "preact/hooks";
import type { Typing } from "../../../gen/aiagent/v1/conversation_service_pb.js";
import { conversations } from "./api.js";

/** Dispatched on window for each typing signal of the account's watch stream (see live.ts). */
export const TYPING_EVENT = "aiagent:typing";
/** The operator's typing is told at most this often (the service passes on one signal per side per 2 s). */
const SEND_EVERY_MS = 2000;

/** Tells the watchers of the page about a typing signal (never a change of the list: nothing to fetch again). */
export function announceTyping(t: Typing): void {
  dispatchEvent(new CustomEvent<Typing>(TYPING_EVENT, { detail: t }));
}

/** "Customer is typing…" under the open conversation while its customer types, hidden after their silence. */
export function CustomerTyping({ conversationId, name }: { conversationId: string; name: string }) {
  const [shown, setShown] = useState(false);
  useEffect(() => {
    let hide: ReturnType<typeof setTimeout> | undefined;
    const on = (e: Event) => {
      const t = (e as CustomEvent<Typing>).detail;
      if (t.conversationId !== conversationId || t.from !== "user") return;
      setShown(true);
      clearTimeout(hide);
      hide = setTimeout(() => setShown(false), t.expiresInMs || 5000);
    };
    addEventListener(TYPING_EVENT, on);
    return () => {
      clearTimeout(hide);
      removeEventListener(TYPING_EVENT, on);
    };
  }, [conversationId]);
  return (
    <p class="typing muted" role="status" data-testid="customer-typing">
      {shown ? `${name} is typing…` : ""}
    </p>
  );
}

/** A function to call on each keystroke of the reply: tells the customer the operator is typing, throttled. */
export function useOperatorTyping(conversationId: string): () => void {
  const last = useRef(0);
  return () => {
    const now = Date.now();
    if (now - last.current < SEND_EVERY_MS) return;
    last.current = now;
    // Best effort: a lost signal only leaves the customer's indicator unshown.
    conversations.sendTyping({ conversationId }).catch(() => undefined);
  };
}
