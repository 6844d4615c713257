// Queries of one shape built and compiled once.
import type { Compilable, CompiledQuery, Kysely } from 'kysely';
import type { Database } from './tables.js';

/**
 * A query of one shape that Kysely builds and compiles once, on its first run: later runs bind their own values where
 * the first build put them, so a request does not pay for building and compiling it again (docs/DESIGN.md §38). Only
 * for queries whose SQL does not depend on their values (no lists, no optional clauses); made per storage, as the SQL
 * is its dialect's.
 */
export function compiledOnce<V extends string[], R>(build: (db: Kysely<Database>, ...values: V) => Compilable<R>) {
  let made: { compiled: CompiledQuery<R>; slots: (number | undefined)[] } | undefined;
  return async (db: Kysely<Database>, ...values: V): Promise<R[]> => {
    if (made === undefined) {
      // Markers no real value holds: where each lands in the parameters is where its value goes.
      const markers = values.map((_, i) => `\u0000value ${i}\u0000`) as V;
      const compiled = build(db, ...markers).compile();
      const slots = compiled.parameters.map((p) => {
        const at = markers.indexOf(p as string);
        return at === -1 ? undefined : at;
      });
      if (markers.some((_, i) => !slots.includes(i)))
        throw new Error('a value of the query is not one of its parameters');
      made = { compiled, slots };
    }
    const { compiled, slots } = made;
    const parameters = compiled.parameters.map((p, k) => {
      const slot = slots[k];
      return slot === undefined ? p : values[slot];
    });
    return (await db.executeQuery<R>({ ...compiled, parameters })).rows;
  };
}
