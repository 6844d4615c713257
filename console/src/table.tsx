// The lists' table: a caption, column headers that sort through the page's query string (aria-sort says the current
// order), and the arrow keys moving between cells like a spreadsheet (Tab still goes from control to control).
import type { ComponentChildren, TargetedKeyboardEvent } from 'preact';
import { useState } from 'preact/hooks';
import { href, navigate } from './router.js';

export interface Column<T> {
  label: string;
  cell(row: T): ComponentChildren;
  /** The `sortBy` value of this column, when the list sorts by it. */
  sort?: string;
  numeric?: boolean;
}

export interface SortState {
  path: string;
  params: URLSearchParams;
  /** The spellings of `sortOrder` for this list. */
  orders: readonly [string, string];
  /** The sort the list applies when none is given. */
  defaultBy?: string;
  defaultOrder?: string;
}

/** Moves focus to the neighbouring cell (its first control, else the cell itself) on an arrow key. */
const STEPS: Record<string, readonly [number, number]> = {
  ArrowDown: [1, 0],
  ArrowUp: [-1, 0],
  ArrowRight: [0, 1],
  ArrowLeft: [0, -1],
};

function moveFocus(event: TargetedKeyboardEvent<HTMLTableElement>): void {
  const step = STEPS[event.key];
  if (!step) return;
  const target = event.target as HTMLElement;
  // Arrow keys inside a text field or a select keep their own meaning.
  if (target.closest('input, select, textarea')) return;
  const cell = target.closest('td, th');
  const row = cell?.parentElement;
  if (!(cell instanceof HTMLTableCellElement) || !(row instanceof HTMLTableRowElement)) return;
  const rows = [...event.currentTarget.rows];
  const nextRow = rows[rows.indexOf(row) + step[0]];
  const nextCell = nextRow?.cells[Math.min(cell.cellIndex + step[1], nextRow.cells.length - 1)];
  if (!nextCell || nextCell === cell) return;
  event.preventDefault();
  const control = nextCell.querySelector<HTMLElement>('a, button');
  if (control) control.focus();
  else {
    nextCell.tabIndex = -1;
    nextCell.focus();
  }
}

function SortHeader<T>(props: { column: Column<T> & { sort: string }; state: SortState }) {
  const { column, state } = props;
  const [asc, desc] = state.orders;
  const by = state.params.get('sortBy') ?? state.defaultBy;
  const order = state.params.get('sortOrder') ?? state.defaultOrder ?? asc;
  const active = by === column.sort;
  const next = new URLSearchParams(state.params);
  next.set('sortBy', column.sort);
  next.set('sortOrder', active && order === asc ? desc : asc);
  next.delete('page');
  const direction = order === asc ? 'ascending' : 'descending';
  return (
    <th scope="col" aria-sort={active ? direction : undefined} class={column.numeric ? 'num' : undefined}>
      <button type="button" class="sort" onClick={() => navigate(href(state.path, next))}>
        {column.label}
        <span aria-hidden="true">{active ? (order === asc ? ' ▲' : ' ▼') : ''}</span>
        <span class="visually-hidden">, sort {active && order === asc ? 'descending' : 'ascending'}</span>
      </button>
    </th>
  );
}

/** Which rows show their details: the set of their keys, and the toggle of one. */
export function useOpenRows(): [ReadonlySet<string>, (key: string) => void] {
  const [open, setOpen] = useState<ReadonlySet<string>>(new Set());
  const toggle = (key: string) =>
    setOpen((previous) => {
      const next = new Set(previous);
      if (!next.delete(key)) next.add(key);
      return next;
    });
  return [open, toggle];
}

export function DataTable<T>(props: {
  caption: string;
  columns: readonly Column<T>[];
  rows: readonly T[];
  rowKey(row: T, index: number): string;
  sort?: SortState;
  /** Extra content under a row (its details), as a full-width row. */
  details?(row: T): ComponentChildren;
}) {
  const { columns, rows, sort } = props;
  return (
    <div class="table-wrap">
      <table onKeyDown={moveFocus}>
        <caption>{props.caption}</caption>
        <thead>
          <tr>
            {columns.map((column) =>
              column.sort !== undefined && sort ? (
                <SortHeader key={column.label} column={{ ...column, sort: column.sort }} state={sort} />
              ) : (
                <th key={column.label} scope="col" class={column.numeric ? 'num' : undefined}>
                  {column.label}
                </th>
              ),
            )}
          </tr>
        </thead>
        <tbody>
          {rows.length === 0 && (
            <tr>
              <td colSpan={columns.length} class="muted">
                Nothing matches these filters.
              </td>
            </tr>
          )}
          {rows.map((row, index) => {
            const details = props.details?.(row);
            const key = props.rowKey(row, index);
            return [
              <tr key={key}>
                {columns.map((column) => (
                  <td key={column.label} class={column.numeric ? 'num' : undefined}>
                    {column.cell(row)}
                  </td>
                ))}
              </tr>,
              details ? (
                <tr key={`${key}-details`} class="details-row">
                  <td colSpan={columns.length}>{details}</td>
                </tr>
              ) : null,
            ];
          })}
        </tbody>
      </table>
    </div>
  );
}
