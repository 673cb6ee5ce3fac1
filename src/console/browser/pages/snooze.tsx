import { useEffect, useState } from "preact/hooks";
import type { ConversationLabels } from "../../../../gen/aiagent/v1/conversation_service_pb.js";
import { conversations } from "../api.js";
import { ActionError, useAction } from "../ui.js";

const HOUR = 3_600_000;

/** The snooze menu's choices, as Chatwoot's: an hour, tomorrow at 9, next Monday at 9 (the browser's time zone). */
export function snoozeChoices(now: Date): { key: string; label: string; at: Date }[] {
  const tomorrow = new Date(now);
  tomorrow.setDate(now.getDate() + 1);
  tomorrow.setHours(9, 0, 0, 0);
  const monday = new Date(now);
  monday.setDate(now.getDate() + ((8 - now.getDay()) % 7 || 7));
  monday.setHours(9, 0, 0, 0);
  return [
    { key: "hour", label: "1 hour", at: new Date(now.getTime() + HOUR) },
    { key: "tomorrow", label: "Tomorrow, 9:00", at: tomorrow },
    { key: "week", label: "Next week, Monday 9:00", at: monday },
  ];
}

/** A time as the console shows it: the weekday, date and time in the browser's zone. */
export function shownTime(iso: string): string {
  return new Date(iso).toLocaleString(undefined, {
    weekday: "short",
    day: "numeric",
    month: "short",
    hour: "2-digit",
    minute: "2-digit",
  });
}

/** The SLA's state in words: the time left on a waiting conversation, or how it ended. */
export function slaText(status: string, dueAt: string, now: number): string {
  if (status === "breached") return "SLA breached";
  if (status === "met") return "SLA met";
  if (status !== "pending" || dueAt === "") return "";
  const left = Date.parse(dueAt) - now;
  if (left <= 0) return "SLA breached";
  const min = Math.ceil(left / 60_000);
  return min >= 120 ? `SLA ${Math.floor(min / 60)} h left` : `SLA ${min} min left`;
}

/** Re-renders every 30 s: the time left moves on. */
export function useMinuteTick(): number {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), 30_000);
    return () => clearInterval(t);
  }, []);
  return now;
}

/** The SLA chip of a conversation, when a clock runs or ran for it. */
export function SlaChip(props: { status: string; dueAt: string }) {
  const now = useMinuteTick();
  const text = slaText(props.status, props.dueAt, now);
  if (text === "") return null;
  const state = text === "SLA breached" ? "breached" : props.status;
  return (
    <span class={`sla sla--${state}`} data-testid="sla" data-sla={state}>
      {text}
    </span>
  );
}

/**
 * The open conversation's snooze (until when, shown) and its menu: 1 hour, tomorrow, next week, a chosen time, or
 * wake it now; and its SLA chip. `carried` is ListConversationLabels' answer; `onChanged` after a change.
 */
export function SnoozeBar(props: {
  conversationId: string;
  carried: ConversationLabels | undefined;
  onChanged: (c: ConversationLabels | undefined) => void;
}) {
  const [open, setOpen] = useState(false);
  const [chosen, setChosen] = useState("");
  const a = useAction();
  const until = props.carried?.snoozedUntil ?? "";
  const snooze = (at: string) =>
    a.run(async () => {
      const r = await conversations.snoozeConversation({ conversationId: props.conversationId, snoozedUntil: at });
      props.onChanged(r.data);
      setOpen(false);
    });
  const menuId = `snooze-${props.conversationId}`;
  return (
    <div class="snooze">
      <SlaChip status={props.carried?.firstResponseStatus ?? ""} dueAt={props.carried?.firstResponseDueAt ?? ""} />
      {until !== "" && (
        <span class="snooze__until" data-testid="snoozed-until">
          Snoozed until {shownTime(until)}
        </span>
      )}
      <button
        type="button"
        class="button button--quiet"
        aria-expanded={open}
        aria-controls={menuId}
        onClick={() => setOpen(!open)}
      >
        Snooze
      </button>
      {open && (
        <fieldset class="snooze__menu" id={menuId}>
          <legend>Snooze until</legend>
          {snoozeChoices(new Date()).map((c) => (
            <button
              key={c.key}
              type="button"
              class="button"
              disabled={a.busy}
              onClick={() => void snooze(c.at.toISOString())}
            >
              {c.label}
            </button>
          ))}
          <form
            class="snooze__chosen"
            onSubmit={(e) => {
              e.preventDefault();
              if (chosen !== "") void snooze(new Date(chosen).toISOString());
            }}
          >
            <label for={`${menuId}-at`}>A chosen time</label>
            <input
              id={`${menuId}-at`}
              type="datetime-local"
              value={chosen}
              onInput={(e) => setChosen(e.currentTarget.value)}
            />
            <button type="submit" class="button" disabled={a.busy || chosen === ""}>
              Snooze
            </button>
          </form>
          {until !== "" && (
            <button type="button" class="button button--quiet" disabled={a.busy} onClick={() => void snooze("")}>
              Wake it now
            </button>
          )}
          <ActionError error={a.error} />
        </fieldset>
      )}
    </div>
  );
}
