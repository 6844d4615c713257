// The scratch file of a report's merged findings (src/storage/db/scratch.ts) writes its values in batches: whatever the
// sequence of adds, updates and reads, before and after a batch is written, it must answer as a plain array would.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { openScratch } from '../../../src/storage/db/scratch.js';

type Op =
  | { add: [value: string, key: string] }
  | { set: [number, string] }
  | { get: number }
  | { rows: true }
  | { byKey: true };

const op: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 8,
    // Keys from a small alphabet repeat (ties list in the order added), and reach past U+FFFF.
    arbitrary: fc
      .tuple(
        fc.string({ maxLength: 12 }),
        fc.string({ unit: fc.constantFrom('a', 'b', 'é', '\uffff', '😀'), maxLength: 3 }),
      )
      .map((add) => ({ add })),
  },
  { weight: 2, arbitrary: fc.tuple(fc.nat(), fc.string({ maxLength: 12 })).map((set) => ({ set })) },
  { weight: 2, arbitrary: fc.nat().map((get) => ({ get })) },
  { weight: 1, arbitrary: fc.constant({ rows: true as const }) },
  { weight: 1, arbitrary: fc.constant({ byKey: true as const }) },
);

/** The model's rows by key, as SQLite's binary collation orders them: by the UTF-8 bytes, then in the order added. */
const sortedByKey = (model: [string, string][]): [string, string][] =>
  model
    .map(([value, key], row) => ({ value, key, bytes: Buffer.from(key), row }))
    .sort((a, b) => Buffer.compare(a.bytes, b.bytes) || a.row - b.row)
    .map(({ value, key }) => [key, value]);

describe('the scratch file', () => {
  it('answers every add, set, get and listing (every row, and by key) as an array does, across its batches', () => {
    fc.assert(
      fc.property(fc.array(op, { minLength: 700, maxLength: 1400 }), (ops) => {
        const scratch = openScratch();
        const model: [value: string, key: string][] = [];
        try {
          for (const o of ops) {
            if ('add' in o) {
              model.push(o.add);
              expect(scratch.add(...o.add)).toBe(model.length);
            } else if ('set' in o) {
              if (model.length === 0) continue;
              const row = (o.set[0] % model.length) + 1;
              model[row - 1]![0] = o.set[1];
              scratch.set(row, o.set[1]);
            } else if ('get' in o) {
              if (model.length === 0) continue;
              const row = (o.get % model.length) + 1;
              expect(scratch.get(row)).toBe(model[row - 1]![0]);
            } else if ('rows' in o) {
              expect(model.map((_, i) => scratch.get(i + 1))).toEqual(model.map(([value]) => value));
            } else {
              expect([...scratch.byKey()]).toEqual(sortedByKey(model));
            }
          }
          expect(model.map((_, i) => scratch.get(i + 1))).toEqual(model.map(([value]) => value));
          expect([...scratch.byKey()]).toEqual(sortedByKey(model));
        } finally {
          scratch.close();
        }
      }),
      { numRuns: 30 },
    );
    // Several seconds of CPU alone (30 sequences of up to 1,400 operations, each listing compared with the model's):
    // on two cores shared with the rest of the suite it has taken more than the default 30 s.
  }, 180_000);
});
