// The scratch file of a report's merged findings (src/storage/scratch.ts) writes its values in batches: whatever the
// sequence of adds, updates and reads, before and after a batch is written, it must answer as a plain array would.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { openScratch } from '../../src/storage/scratch.js';

type Op = { add: string } | { set: [number, string] } | { get: number } | { values: true };

const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 8, arbitrary: fc.string({ maxLength: 12 }).map((add) => ({ add })) },
  { weight: 2, arbitrary: fc.tuple(fc.nat(), fc.string({ maxLength: 12 })).map((set) => ({ set })) },
  { weight: 2, arbitrary: fc.nat().map((get) => ({ get })) },
  { weight: 1, arbitrary: fc.constant({ values: true as const }) },
);

describe('the scratch file', () => {
  it('answers every add, set, get and listing as an array does, across the batches it writes', () => {
    fc.assert(
      fc.property(fc.array(op, { minLength: 700, maxLength: 1400 }), (ops) => {
        const scratch = openScratch();
        const model: string[] = [];
        try {
          for (const o of ops) {
            if ('add' in o) {
              model.push(o.add);
              expect(scratch.add(o.add)).toBe(model.length);
            } else if ('set' in o) {
              if (model.length === 0) continue;
              const row = (o.set[0] % model.length) + 1;
              model[row - 1] = o.set[1];
              scratch.set(row, o.set[1]);
            } else if ('get' in o) {
              if (model.length === 0) continue;
              const row = (o.get % model.length) + 1;
              expect(scratch.get(row)).toBe(model[row - 1]);
            } else {
              expect([...scratch.values()]).toEqual(model);
            }
          }
          expect([...scratch.values()]).toEqual(model);
        } finally {
          scratch.close();
        }
      }),
      { numRuns: 30 },
    );
  });
});
