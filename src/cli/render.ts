// The output formats of `secinv api` (docs/DESIGN.md §32): records written one at a time as they arrive, waiting for
// stdout to drain, so `--all` runs in constant memory whatever the format. Columns (table, csv) are the --fields
// given, dotted paths reaching into nested objects, or each resource's default set (table) / the first record's keys.
import { stringify } from 'yaml';
import { csvRow } from '../http/csv.js';
import type { Io } from './io.js';

export const outputFormats = ['table', 'json', 'ndjson', 'csv', 'yaml'] as const;
export type OutputFormat = (typeof outputFormats)[number];

type Json = Record<string, unknown>;

export interface RecordWriter {
  write(record: Json): Promise<void>;
  end(): Promise<void>;
}

/** stdout was closed by its reader (`secinv api … | head`): the output ends there, which is not a failure. */
export class OutputClosed extends Error {}

/**
 * Writes text to stdout, resolving once the stream can take more (backpressure keeps memory flat); rejects with
 * OutputClosed once the reader has gone, so that a download in progress is abandoned rather than read to its end.
 */
export function emit(io: Io, text: string): Promise<void> {
  const stdout = io.stdout as NodeJS.WritableStream & { destroyed?: boolean };
  if (stdout.destroyed === true) return Promise.reject(new OutputClosed());
  if (stdout.write(text)) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const drained = () => {
      stdout.off('close', closed);
      resolve();
    };
    const closed = () => {
      stdout.off('drain', drained);
      reject(new OutputClosed());
    };
    stdout.once('drain', drained);
    stdout.once('close', closed);
  });
}

/** Runs work that writes to stdout; a reader that goes away ends it quietly (its EPIPE is not a crash). */
export async function writingStdout(io: Io, work: () => Promise<void>): Promise<void> {
  const ignorePipe = (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
  };
  io.stdout.on('error', ignorePipe);
  try {
    await work();
  } catch (error) {
    if (!(error instanceof OutputClosed)) throw error;
  } finally {
    io.stdout.off('error', ignorePipe);
  }
}

/** The value at a dotted path (`meta.assetName`), or undefined. */
export function valueAt(record: Json, path: string): unknown {
  let value: unknown = record;
  for (const part of path.split('.')) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Json)[part];
  }
  return value;
}

/** A record with only the named fields (dotted paths kept as flat keys). */
export const project = (record: Json, fields: readonly string[] | undefined): Json =>
  fields === undefined ? record : Object.fromEntries(fields.map((f) => [f, valueAt(record, f) ?? null]));

/** A table cell: text, numbers and booleans as written, null as `-`, objects as compact JSON, one line. */
export function cellText(value: unknown): string {
  if (value === null || value === undefined) return '-';
  const text =
    typeof value === 'string'
      ? value
      : typeof value === 'object'
        ? JSON.stringify(value)
        : `${value as number | boolean}`;
  return text.replace(/[\r\n\t]+/g, ' ');
}

/**
 * Column widths that fit `width` characters: the widest column gives way first, down to its header's width; only
 * when that is not enough do headers get cut, none below 6 characters.
 */
export function fitWidths(natural: readonly number[], headers: readonly number[], width: number | undefined): number[] {
  const widths = [...natural];
  if (width === undefined) return widths;
  const total = () => widths.reduce((a, b) => a + b, 0) + 2 * (widths.length - 1);
  for (const floor of [(i: number) => Math.max(6, headers[i] ?? 0), () => 6]) {
    while (total() > width) {
      const shrinkable = widths.map((w, i) => (w > floor(i) ? w : -1));
      const widest = shrinkable.indexOf(Math.max(...shrinkable));
      if ((shrinkable[widest] ?? -1) < 0) break;
      widths[widest] = (widths[widest] ?? 0) - 1;
    }
  }
  return widths;
}

const fit = (text: string, width: number) =>
  text.length > width ? `${text.slice(0, Math.max(0, width - 1))}…` : text.padEnd(width);

/** Rows buffered to size the columns; later rows are cut to those widths, so memory stays flat. */
const SIZING_ROWS = 100;

function tableWriter(io: Io, columns: readonly string[], width: number | undefined): RecordWriter {
  let pending: string[][] | null = [];
  let widths: number[] = [];
  const line = (cells: readonly string[]) =>
    `${cells
      .map((c, i) => fit(c, widths[i] ?? 0))
      .join('  ')
      .trimEnd()}\n`;
  const flush = async () => {
    if (pending === null) return;
    const rows = pending;
    pending = null;
    widths = fitWidths(
      columns.map((c, i) => Math.max(c.length, ...rows.map((r) => (r[i] ?? '').length))),
      columns.map((c) => c.length),
      width,
    );
    await emit(io, [columns, ...rows].map(line).join(''));
  };
  return {
    async write(record) {
      const cells = columns.map((c) => cellText(valueAt(record, c)));
      if (pending === null) return emit(io, line(cells));
      pending.push(cells);
      if (pending.length >= SIZING_ROWS) await flush();
    },
    end: flush,
  };
}

export interface WriterOptions {
  format: OutputFormat;
  /** --fields: the record is reduced to these (dotted paths allowed). */
  fields: readonly string[] | undefined;
  /** Table columns when no --fields are given. */
  defaultColumns: readonly string[];
}

/** A writer of a list of records in the format. */
export function recordWriter(io: Io, options: WriterOptions): RecordWriter {
  const { format, fields } = options;
  switch (format) {
    case 'table':
      return tableWriter(
        io,
        fields ?? options.defaultColumns,
        io.stdout.isTTY === true ? terminalWidth(io) : undefined,
      );
    case 'ndjson':
      return { write: (r) => emit(io, `${JSON.stringify(project(r, fields))}\n`), end: async () => undefined };
    case 'yaml':
      // Each record a sequence item: concatenated, they are one YAML list.
      return { write: (r) => emit(io, stringify([project(r, fields)])), end: async () => undefined };
    case 'json': {
      let first = true;
      return {
        write: async (r) => {
          const text = JSON.stringify(project(r, fields), null, 2).replace(/\n/g, '\n  ');
          await emit(io, `${first ? '[\n  ' : ',\n  '}${text}`);
          first = false;
        },
        end: () => emit(io, first ? '[]\n' : '\n]\n'),
      };
    }
    case 'csv': {
      let columns: readonly string[] | undefined = fields;
      let first = true;
      return {
        write: async (r) => {
          columns ??= Object.keys(r);
          const header = first ? csvRow(columns) : '';
          first = false;
          await emit(io, header + csvRow(columns.map((c) => valueAt(r, c) ?? null)));
        },
        end: async () => {
          if (first && columns !== undefined) await emit(io, csvRow(columns));
        },
      };
    }
  }
}

export const terminalWidth = (io: Io): number | undefined => (io.stdout as { columns?: number }).columns ?? undefined;

/** One record (a get): a table of field and value, or the record in the format. */
export async function writeOne(io: Io, record: Json, format: OutputFormat, fields: readonly string[] | undefined) {
  const shown = project(record, fields);
  if (format === 'json') return emit(io, `${JSON.stringify(shown, null, 2)}\n`);
  if (format === 'yaml') return emit(io, stringify(shown));
  if (format === 'table') {
    const writer = tableWriter(io, ['field', 'value'], io.stdout.isTTY === true ? terminalWidth(io) : undefined);
    for (const [field, value] of Object.entries(shown)) await writer.write({ field, value });
    return writer.end();
  }
  const writer = recordWriter(io, { format, fields, defaultColumns: [] });
  await writer.write(shown);
  return writer.end();
}
