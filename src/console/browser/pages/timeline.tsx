import { useEffect, useRef, useState } from "preact/hooks";
import type { Activity, Contact, WatchAccountResponse } from "../../../../gen/aiagent/v1/conversation_service_pb.js";
import { conversations } from "../api.js";
import { when } from "../ui.js";

const AI = "ai_agent";

/** A timeline line in words, by display name: "Bea Stone took over from Sam Lee". */
export function activityText(a: Activity): string {
  const from = a.fromEmail === AI ? "the AI agent" : a.fromName || a.fromEmail;
  const to = a.toEmail === AI ? "the AI agent" : a.toName || a.toEmail;
  switch (a.kind) {
    case "taken_over":
      return `${a.actorName} took over from ${from}`;
    case "assigned":
      return a.fromEmail && a.fromEmail !== AI
        ? `${a.actorName} reassigned it from ${from} to ${to}`
        : `${a.actorName} assigned it to ${to}`;
    case "released":
      return `${a.actorName} handed it back to the AI agent`;
    case "closed":
      return `${a.actorName} closed the conversation`;
    case "reopened":
      return `${a.actorName} reopened the conversation`;
    case "handed_over":
      return `The AI agent handed over to the team${a.detail ? `: ${a.detail}` : ""}`;
    case "rated":
      return `The customer rated it ${a.detail} of 5`;
    case "prioritized":
      return `${a.actorName} changed the priority: ${a.detail}`;
    case "labeled":
      return `${a.actorName} changed the labels: ${a.detail}`;
    case "snoozed":
      return `${a.actorName} snoozed it until ${new Date(a.detail).toLocaleString()}`;
    case "unsnoozed":
      return a.detail === "customer"
        ? "It woke: the customer wrote"
        : a.detail === "person"
          ? `${a.actorName} woke it`
          : "It woke: its snooze ended";
    case "sla_breached":
      return `It missed its first-response SLA (due ${new Date(a.detail).toLocaleString()})`;
    default:
      return `${a.actorName || "Someone"}: ${a.kind}`;
  }
}

/** One line of the timeline, between the messages. */
export function ActivityLine({ a }: { a: Activity }) {
  return (
    <p class="activity" data-testid="activity" data-kind={a.kind}>
      <span>{activityText(a)}</span> <time dateTime={a.createdAt}>{when(a.createdAt)}</time>
    </p>
  );
}

/** The conversation's timeline, read again at each `n` (a change of its state seen live). */
export function useActivity(conversationId: string, n: number): Activity[] {
  const [lines, setLines] = useState<Activity[]>([]);
  useEffect(() => {
    let gone = false;
    conversations.listConversationActivity({ conversationId }).then(
      (r) => !gone && setLines(r.data?.activities ?? []),
      () => undefined,
    );
    return () => {
      gone = true;
    };
  }, [conversationId, n]);
  return lines;
}

/**
 * "Take over": straight away from the AI agent; from a colleague, only once confirmed (they are told, live).
 */
export function TakeOver(props: { holder: string; holderName: string; busy: boolean; onTake: () => void }) {
  const [asking, setAsking] = useState(false);
  const colleague = props.holder !== AI;
  const name = props.holderName || props.holder;
  if (asking)
    return (
      <div class="confirm" role="alertdialog" aria-labelledby="take-over-question">
        <p id="take-over-question">
          {name} holds this conversation. Take it over? {name} will be told.
        </p>
        <button
          type="button"
          class="button button--primary"
          disabled={props.busy}
          onClick={() => {
            setAsking(false);
            props.onTake();
          }}
        >
          Take over from {name}
        </button>
        <button type="button" class="button" onClick={() => setAsking(false)}>
          Cancel
        </button>
      </div>
    );
  return (
    <button
      type="button"
      class="button button--primary"
      disabled={props.busy}
      onClick={() => (colleague ? setAsking(true) : props.onTake())}
    >
      Take over
    </button>
  );
}

/** What the signed-in person is told when a conversation they held is taken from them. */
export interface TakenNotice {
  conversationId: string;
  text: string;
}

/**
 * Follows who holds each conversation (from the inbox's list and the live stream); when one the signed-in person
 * held passes to someone else, reads its timeline and says who did it: "Bea Stone took over from you: Ada".
 */
export function useTakenFromMe(me: string, contacts: Contact[]) {
  const holders = useRef(new Map<string, string>());
  const names = useRef(new Map<string, string>());
  const [notices, setNotices] = useState<TakenNotice[]>([]);
  useEffect(() => {
    for (const c of contacts) {
      if (!holders.current.has(c.latestConversationId)) holders.current.set(c.latestConversationId, c.assignedTo);
      names.current.set(c.latestConversationId, c.contactName || c.email || c.userId);
    }
  }, [contacts]);
  const seen = (e: WatchAccountResponse["event"]) => {
    if (e.case !== "conversation") return;
    const id = e.value.conversationId;
    const before = holders.current.get(id);
    holders.current.set(id, e.value.assignedTo);
    if (before?.toLowerCase() !== me.toLowerCase() || e.value.assignedTo.toLowerCase() === me.toLowerCase()) return;
    void conversations.listConversationActivity({ conversationId: id }).then(
      (r) => {
        const last = [...(r.data?.activities ?? [])]
          .reverse()
          .find((a) => ["taken_over", "assigned", "released"].includes(a.kind));
        const who = names.current.get(id) ?? "a customer";
        const text = last
          ? `${activityText(last).replace(` from ${last.fromName}`, " from you")} (conversation with ${who})`
          : `Your conversation with ${who} is now held by ${e.value.operatorName || e.value.assignedTo}`;
        setNotices((ns) => [...ns.filter((n) => n.conversationId !== id), { conversationId: id, text }]);
      },
      () => undefined,
    );
  };
  const dismiss = (id: string) => setNotices((ns) => ns.filter((n) => n.conversationId !== id));
  return { notices, seen, dismiss };
}

/** The notices of conversations taken from the signed-in person, each dismissable. */
export function TakenNotices(props: { notices: TakenNotice[]; dismiss: (id: string) => void }) {
  return (
    <div class="taken" role="status" aria-live="polite">
      {props.notices.map((n) => (
        <p key={n.conversationId} class="taken__notice" data-testid="taken-notice">
          <span>{n.text}</span>{" "}
          <button type="button" class="button button--quiet" onClick={() => props.dismiss(n.conversationId)}>
            Dismiss
          </button>
        </p>
      ))}
    </div>
  );
}
