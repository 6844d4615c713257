// CSV of the exports and of the CLI's tables (RFC 4180: CRLF after every record, quotes doubled, a cell quoted when it
// holds a quote, comma or line break). An export's rows are written from the bytes of each stored item without parsing
// it (csv-items.ts, docs/DESIGN.md §36); csvRow is the definition they follow.

/** A text cell that a spreadsheet would run as a formula (OWASP, CSV injection): it gets a leading '. */
const FORMULA_START = /^[=+\-@\t\r]/;
/** A cell that must be quoted (RFC 4180): it holds a quote, a comma or a line break. */
const NEEDS_QUOTES = /[",\r\n]/;

export const quoted = (text: string): string => (NEEDS_QUOTES.test(text) ? `"${text.replaceAll('"', '""')}"` : text);
export const textCell = (value: string): string => quoted(FORMULA_START.test(value) ? `'${value}` : value);

/**
 * One CSV cell: text as is (behind a ' when it starts like a formula), numbers as JSON writes them, booleans
 * true/false, null and absent empty, objects and arrays compact JSON; quoted when RFC 4180 requires it.
 */
function csvCell(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return textCell(value);
  if (typeof value === 'number' || typeof value === 'boolean') return quoted(String(value));
  return quoted(JSON.stringify(value));
}

export const csvRow = (cells: readonly unknown[]): string => `${cells.map(csvCell).join(',')}\r\n`;
