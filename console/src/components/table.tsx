import type { ComponentChildren } from "preact";

export interface Column<Row> {
  label: string;
  render: (row: Row) => ComponentChildren;
  numeric?: boolean;
}

/**
 * A table of rows. On narrow screens (phones) each row stacks into a card, every value under or beside its column's
 * label (`data-label`), so nothing hides off-screen to the right: a column without a label (a row's actions) shows
 * its buttons alone.
 */
export function Table<Row>(props: {
  caption: string;
  columns: Column<Row>[];
  rows: Row[];
  rowKey: (row: Row) => string;
}) {
  return (
    // A labelled section (a region): when the table scrolls sideways, the keyboard reaches it too (axe).
    // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region must be reachable by keyboard.
    <section class="table-wrap" tabIndex={0} aria-label={props.caption}>
      <table>
        <caption class="visually-hidden">{props.caption}</caption>
        <thead>
          <tr>
            {props.columns.map((column) => (
              <th key={column.label} scope="col" class={column.numeric ? "num" : undefined}>
                {column.label}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {props.rows.map((row) => (
            <tr key={props.rowKey(row)}>
              {props.columns.map((column) => (
                <td
                  key={column.label}
                  class={column.numeric ? "num" : undefined}
                  data-label={column.label || undefined}
                >
                  <div class="cell">{column.render(row)}</div>
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
