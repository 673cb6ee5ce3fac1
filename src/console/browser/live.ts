import { useEffect, useRef } from "preact/hooks";
import type { WatchAccountResponse } from "../../../gen/aiagent/v1/conversation_service_pb.js";
import { conversations, isSignedOut, SIGNED_OUT_EVENT } from "./api.js";

/**
 * Follows the account's changes on WatchAccount (the push channel the frame's WatchConversation shares), calling
 * `onEvent` for each; when the stream ends (token expiry, a restart, the network) it subscribes again after a
 * short pause and calls `onEvent` with the new `subscribedAt`, so the caller re-lists what it may have missed.
 */
export function useAccountWatch(email: string, onEvent: (e: WatchAccountResponse["event"]) => void): void {
  const handler = useRef(onEvent);
  handler.current = onEvent;
  useEffect(() => {
    const stop = new AbortController();
    void (async () => {
      let pause = 500;
      while (!stop.signal.aborted) {
        try {
          for await (const r of conversations.watchAccount({ userEmailId: email }, { signal: stop.signal })) {
            pause = 500;
            handler.current(r.event);
          }
        } catch (e) {
          if (stop.signal.aborted) return;
          // The stream ended because the session was revoked (signed out elsewhere, removed, password changed).
          if (isSignedOut(e)) return void dispatchEvent(new Event(SIGNED_OUT_EVENT));
        }
        await new Promise((r) => setTimeout(r, pause));
        pause = Math.min(pause * 2, 10_000);
      }
    })();
    return () => stop.abort();
  }, [email]);
}
