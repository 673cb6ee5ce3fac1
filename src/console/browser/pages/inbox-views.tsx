/** Whose conversations the inbox lists (the API's `view`). */
export type View = "all" | "mine" | "unassigned";

const LABELS: Record<View, string> = { all: "All", mine: "Mine", unassigned: "Unassigned" };

/** The inbox's views: every conversation, the ones the signed-in person holds, the ones no person holds. */
export function ViewPicker(props: { view: View; onChange: (v: View) => void; hidden?: boolean }) {
  return (
    <fieldset class="segmented views" hidden={props.hidden}>
      <legend class="sr-only">Whose conversations</legend>
      {(["all", "mine", "unassigned"] as const).map((v) => (
        <button
          key={v}
          type="button"
          // "All" names the status filter's first button too: this one says what it is all of.
          aria-label={v === "all" ? "All conversations" : undefined}
          aria-pressed={props.view === v}
          onClick={() => props.onChange(v)}
        >
          {LABELS[v]}
        </button>
      ))}
    </fieldset>
  );
}
