// Plain-text tables for people: columns padded to their widest cell, two spaces apart, no trailing blanks.
import type { Io } from './io.js';

export function printTable(io: Io, header: readonly string[], rows: readonly (readonly string[])[]): void {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  for (const row of [header, ...rows]) {
    io.stdout.write(
      `${row
        .map((cell, i) => cell.padEnd(widths[i] ?? 0))
        .join('  ')
        .trimEnd()}\n`,
    );
  }
}
