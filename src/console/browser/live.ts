import { Code, ConnectError } from "@connectrpc/connect";
import { useContext, useEffect, useRef } from "preact/hooks";
import type { WatchAccountResponse } from "../../../gen/aiagent/v1/conversation_service_pb.js";
import { Alerts } from "./alerts.js";
import { conversations, isSignedOut, SIGNED_OUT_EVENT } from "./api.js";
import { MENTIONS_CHANGED } from "./pages/mentions.js";
import { SessionContext } from "./session.js";
import { announceTyping } from "./typing.js";
import { announceViewing } from "./viewing.js";

/**
 * Follows the account's changes on WatchAccount (the push channel the frame's WatchConversation shares), calling
 * `onEvent` for each; when the stream ends (token expiry, a restart, the network) it subscribes again after a
 * short pause from the last cursor it received (the missed changes come first, once) and calls `onEvent` with the
 * new `subscribedAt` as well.
 */
export function useAccountWatch(email: string, onEvent: (e: WatchAccountResponse["event"]) => void): void {
  const handler = useRef(onEvent);
  handler.current = onEvent;
  const me = useContext(SessionContext)?.account.callerEmail ?? "";
  useEffect(() => {
    const stop = new AbortController();
    // New customer messages: notification, sound, the count in the title (alerts.ts).
    const alerts = new Alerts(me, email);
    void (async () => {
      let pause = 500;
      // The last event's cursor: a new stream resumes right after it, so nothing in between is missed or repeated.
      let afterCursor = "";
      while (!stop.signal.aborted) {
        try {
          for await (const r of conversations.watchAccount(
            { userEmailId: email, afterCursor },
            { signal: stop.signal },
          )) {
            pause = 500;
            afterCursor = r.cursor;
            // A heartbeat (no event): the connection is alive, nothing changed.
            if (r.event.case === undefined) continue;
            // Typing is no change of the inbox: told to whoever shows it, never a reason to list again.
            if (r.event.case === "typing") announceTyping(r.event.value);
            else if (r.event.case === "viewing") announceViewing(r.event.value);
            else {
              // A note that mentions people: the menu's count of the signed-in person's mentions looks again.
              if (r.event.case === "note" && r.event.value.mentionedMemberIds.length > 0)
                dispatchEvent(new Event(MENTIONS_CHANGED));
              handler.current(r.event);
              void alerts.event(r.event);
            }
          }
        } catch (e) {
          if (stop.signal.aborted) return;
          // The stream ended because the session was revoked (signed out elsewhere, removed, password changed).
          if (isSignedOut(e)) return void dispatchEvent(new Event(SIGNED_OUT_EVENT));
          // A cursor the log no longer reaches: start from now (the caller re-lists on the new subscribedAt).
          if (e instanceof ConnectError && [Code.FailedPrecondition, Code.InvalidArgument].includes(e.code))
            afterCursor = "";
        }
        await new Promise((r) => setTimeout(r, pause));
        pause = Math.min(pause * 2, 10_000);
      }
    })();
    return () => {
      stop.abort();
      alerts.stop();
    };
  }, [email, me]);
}
