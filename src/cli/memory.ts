// How much the JavaScript heap may grow in a process that runs one bulk write (`ingest`, `import`). V8 lets the old
// generation grow to several times what a full collection leaves alive; an ingest keeps 25–50 MB alive but makes
// garbage fast (every finding is parsed, merged, stored and serialised again), so its heap grew to 150–185 MB between
// collections and the process peaked at 254–280 MB for a 200,000-finding report into SQLite. Growing by a fifth of
// the live heap instead kept it at 173–197 MB at the same speed (docs/BENCHMARKS.md, "Ingest memory";
// docs/DESIGN.md §46). It is a factor, not a cap: a report that needs more live memory (millions of finding ids) still
// gets it, where `--max-old-space-size` would end the process. Into PostgreSQL by half: node-postgres builds each
// statement's message in a buffer that it grows by copying, and the collections that garbage sets off at a fifth took
// the same ingest's CPU from 13–15 s to 22–27 s; at half, 17 s of CPU while the server's time kept the wall time where
// it was, and the peak went from 278–280 to 187–203 MB (docs/DESIGN.md §53). An import of 1,000,000 findings into
// SQLite peaked at 470–496 MB with V8's own growth and at 292–310 MB with a fifth, 3–6% slower (docs/DESIGN.md §61).
import { setFlagsFromString } from 'node:v8';
import { parseDatabaseUrl } from '../storage/db/url.js';

/** The old generation's growth after each full collection, in percent of what that collection left alive. */
export const BULK_HEAP_GROWING_PERCENT = { sqlite: 20, postgres: 50 } as const;

export const heapGrowingFlag = (percent: number): string => `--heap-growing-percent=${percent}`;

/**
 * Sets the heap growth of a bulk write for the rest of the process, by the database it writes to.
 * V8 reads this flag at every collection, so unlike the heap size flags it works after start-up. Only the `secinv`
 * executable calls it: it changes the whole process, and a test runner that calls the command line in process must
 * keep its own settings.
 */
export function boundBulkHeap(databaseUrl: string): void {
  setFlagsFromString(heapGrowingFlag(BULK_HEAP_GROWING_PERCENT[parseDatabaseUrl(databaseUrl).dialect]));
}
