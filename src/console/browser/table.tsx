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

/**
 * A list of things as a table in its scrolling wrapper: named for screen readers by its caption, one header row
 * of `columns` (and an actions column when `actions`), `children` its body rows and `after` what follows it in the
 * wrapper. Every list shares it so their tables stay alike to the eye and to screen readers.
 */
export function DataTable(props: {
  caption: string;
  columns: readonly string[];
  actions?: boolean;
  testId?: string;
  after?: ComponentChildren;
  children: ComponentChildren;
}) {
  return (
    <div class="table-wrap">
      <table data-testid={props.testId}>
        <caption class="sr-only">{props.caption}</caption>
        <thead>
          <tr>
            {props.columns.map((c) => (
              <th key={c} scope="col">
                {c}
              </th>
            ))}
            {props.actions && <ActionsHeader />}
          </tr>
        </thead>
        <tbody>{props.children}</tbody>
      </table>
      {props.after}
    </div>
  );
}
