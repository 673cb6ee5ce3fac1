import type { ComponentChildren } from "preact";

// The parts of the console's tables that every list of things with actions shares.

/** A table row's destructive action, named for screen readers by what it acts on. */
export function RowAction(props: { label: string; busy: boolean; onClick: () => void; children: ComponentChildren }) {
  return (
    <button
      type="button"
      class="button button--danger"
      disabled={props.busy}
      onClick={props.onClick}
      aria-label={props.label}
    >
      {props.children}
    </button>
  );
}

/** The header of a table's actions column: empty to the eye, named for screen readers. */
export function ActionsHeader() {
  return (
    <th scope="col">
      <span class="sr-only">Actions</span>
    </th>
  );
}
