// A process that follows the change log from its end and stops the follower while it waits for its next look, first by
// return(), then by its signal: nothing may be left that keeps the process alive, so it exits at once instead of after
// the ten minutes the follower would wait. test/client/client.test.ts runs it: node --import tsx follow-stop.ts URL KEY
// CURSOR.
import { createClient } from '../../src/client/index.js';

const [baseUrl, apiKey, cursor] = process.argv.slice(2);
const client = createClient({ baseUrl: baseUrl!, apiKey: apiKey! });
const intervalMs = 600_000;
const later = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const returned = client.changes.follow(cursor, { intervalMs });
const pending = returned.next();
await later(300);
await returned.return();
const last = await pending;

const controller = new AbortController();
const aborted = client.changes.follow(cursor, { intervalMs, signal: controller.signal });
setTimeout(() => controller.abort(), 300);
let yielded = 0;
for await (const _ of aborted) yielded += 1;

process.stdout.write(JSON.stringify({ done: last.done, yielded, cursor: aborted.cursor }));
