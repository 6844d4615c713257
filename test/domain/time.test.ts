// Timestamps already in the output format skip parsing and formatting (src/domain/time.ts): the shortcut must answer
// exactly what parsing and formatting answer, for real instants and for texts of the right shape that are not one.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatTimestamp, normalizeTimestamp, parseTimestamp } from '../../src/domain/time.js';

/** What normalizeTimestamp answered before the shortcut: parse, format, and keep four-digit years only. */
const byParsing = (text: string): string | null => {
  const ms = parseTimestamp(text);
  if (ms === null) return null;
  const out = formatTimestamp(ms);
  return out.length === 24 ? out : null;
};

const pad = (n: number, width: number) => String(n).padStart(width, '0');

describe('timestamps in the output format', () => {
  it('are kept as they are when they are real instants', () => {
    fc.assert(
      fc.property(fc.integer({ min: -62_167_219_200_000, max: 253_402_300_799_999 }), (ms) => {
        const text = formatTimestamp(ms);
        fc.pre(text.length === 24);
        expect(normalizeTimestamp(text)).toBe(text);
        expect(normalizeTimestamp(text)).toBe(byParsing(text));
      }),
      { numRuns: 2000 },
    );
  });

  it('answer what parsing answers for any digits in that shape, out-of-range fields included', () => {
    fc.assert(
      fc.property(
        fc.tuple(
          fc.integer({ min: 0, max: 9999 }),
          fc.integer({ min: 0, max: 99 }),
          fc.integer({ min: 0, max: 99 }),
          fc.integer({ min: 0, max: 99 }),
          fc.integer({ min: 0, max: 99 }),
          fc.integer({ min: 0, max: 99 }),
          fc.integer({ min: 0, max: 999 }),
        ),
        ([y, mo, d, h, mi, s, ms]) => {
          const text = `${pad(y, 4)}-${pad(mo, 2)}-${pad(d, 2)}T${pad(h, 2)}:${pad(mi, 2)}:${pad(s, 2)}.${pad(ms, 3)}Z`;
          expect(normalizeTimestamp(text)).toBe(byParsing(text));
        },
      ),
      { numRuns: 5000 },
    );
    for (const text of ['2024-02-29T23:59:59.999Z', '2023-02-29T00:00:00.000Z', '2024-13-01T00:00:00.000Z'])
      expect(normalizeTimestamp(text)).toBe(byParsing(text));
    expect(normalizeTimestamp('2023-02-29T00:00:00.000Z')).toBeNull();
    expect(normalizeTimestamp('2024-02-29T23:59:59.999Z')).toBe('2024-02-29T23:59:59.999Z');
  });
});
