// Progress of a long command on a terminal: one redrawn line with the share done, the rate, the records and the time
// left. Nothing is drawn when stderr is not a terminal (logs and pipes get the summary line only), nor with --quiet.
// Drawn by hand: a string every 200 ms from counters the readers bump, which costs nothing beside the work measured.
import { statSync } from 'node:fs';
import { pipeline, Transform, type Readable } from 'node:stream';
import { openPath } from '../input/source.js';
import type { Io } from './io.js';

const units = ['B', 'KB', 'MB', 'GB', 'TB'];
const size = (bytes: number): string => {
  let value = bytes;
  let unit = 0;
  while (value >= 1000 && unit < units.length - 1) {
    value /= 1000;
    unit += 1;
  }
  return `${value.toFixed(unit === 0 ? 0 : 1)} ${units[unit]}`;
};
const duration = (seconds: number): string =>
  seconds >= 3600
    ? `${Math.floor(seconds / 3600)} h ${Math.round((seconds % 3600) / 60)} min`
    : seconds >= 60
      ? `${Math.floor(seconds / 60)} min ${Math.round(seconds % 60)} s`
      : `${Math.round(seconds)} s`;

const count = (n: number) => Math.round(n).toLocaleString('en-US');

/**
 * The progress line: `label: 42% of 1.2 GB, 35.0 MB/s, 21 s left`; without a known total, the bytes read and rate.
 * With a record count: `…, 120,000 records (8,000/s), …`. In `records` units the total and rate are of records.
 */
export function progressLine(
  label: string,
  done: number,
  total: number | null,
  elapsedMs: number,
  records: number | null = null,
  unit: 'bytes' | 'records' = 'bytes',
): string {
  const perMs = elapsedMs > 0 ? 1000 / elapsedMs : 0;
  const rate = done * perMs;
  const amount = (n: number) => (unit === 'bytes' ? size(n) : `${count(n)} records`);
  const perSecond = unit === 'bytes' ? `${size(rate)}/s` : `${count(rate)}/s`;
  const counted =
    records === null || unit === 'records' ? '' : `, ${count(records)} records (${count(records * perMs)}/s)`;
  if (total === null || total <= 0)
    return `${label}: ${amount(done)} ${unit === 'bytes' ? 'read' : 'done'}, ${perSecond}${counted}`;
  const share = Math.min(1, done / total);
  const left = rate > 0 ? `, ${duration(Math.max(0, total - done) / rate)} left` : '';
  return `${label}: ${Math.floor(share * 100)}% of ${unit === 'bytes' ? size(total) : `about ${amount(total)}`}, ${perSecond}${counted}${left}`;
}

/** The line of a step without a measure of its own (a feed load's work in the database): `label: 12 s`. */
export const stepLine = (label: string, elapsedMs: number): string => `${label}: ${duration(elapsedMs / 1000)}`;

export interface Progress {
  /** Counts bytes read (records, for a progress in records). */
  add(bytes: number): void;
  /** Sets the number of records handled so far (shown beside the bytes). */
  records(n: number): void;
  /** Starts counting a new input. */
  next(label: string, total: number | null): void;
  /** Shows a step and the time it has taken so far, in place of the counts. */
  step(label: string): void;
  /** Clears the line. */
  stop(): void;
}

/** A progress line on stderr, redrawn every 200 ms, when stderr is a terminal and not quiet; otherwise nothing. */
export function startProgress(io: Io, options: { quiet?: boolean; unit?: 'bytes' | 'records' } = {}): Progress {
  if (io.stderr.isTTY !== true || options.quiet === true)
    return {
      add: () => undefined,
      records: () => undefined,
      next: () => undefined,
      step: () => undefined,
      stop: () => undefined,
    };
  // null once stopped.
  let label: string | null = '';
  let total: number | null = null;
  let done = 0;
  let records: number | null = null;
  let started = Date.now();
  let drawn = 0;
  let stepping = false;
  const draw = () => {
    drawn = Date.now();
    if (!label) return;
    const line = stepping
      ? stepLine(label, drawn - started)
      : progressLine(label, done, total, drawn - started, records, options.unit ?? 'bytes');
    io.stderr.write(`\r\x1b[K${line}`);
  };
  // Drawn from the timer, and from the counters too: work that never yields to the event loop (a generated input read
  // synchronously) would otherwise leave the line blank until it ends.
  const due = () => {
    if (Date.now() - drawn >= 200) draw();
  };
  const timer = setInterval(draw, 200);
  timer.unref();
  return {
    add: (bytes) => {
      done += bytes;
      due();
    },
    records: (n) => {
      records = n;
      due();
    },
    next: (nextLabel, nextTotal) => {
      label = nextLabel;
      total = nextTotal;
      done = 0;
      stepping = false;
      started = Date.now();
    },
    step: (stepLabel) => {
      if (label === null) return;
      label = stepLabel;
      stepping = true;
      started = Date.now();
      draw();
    },
    stop: () => {
      if (label === null) return;
      clearInterval(timer);
      io.stderr.write('\r\x1b[K');
      label = null;
    },
  };
}

const sizeOf = (file: string): number | null => {
  try {
    return statSync(file).size;
  } catch {
    return null;
  }
};

/**
 * Opens a file (`-`: standard input) for a reader, counting its bytes on the progress line as they are read from the
 * file (compressed ones too), so the share is of the file's size.
 */
export const countedFile = (progress: Progress, file: string) => (): Readable => {
  progress.next(file === '-' ? '<stdin>' : file, file === '-' ? null : sizeOf(file));
  const counter = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      progress.add(chunk.length);
      done(null, chunk);
    },
  });
  // A read error of the file reaches the reader through the counter.
  pipeline(openPath(file)(), counter, () => undefined);
  return counter;
};
