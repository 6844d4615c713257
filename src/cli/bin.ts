// The `secinv` executable: bin/secinv.js runs the compiled copy, `npm run dev` this source through tsx.
import { main } from './main.js';
import { boundBulkHeap } from './memory.js';

// A reader that goes away early (`secinv --help | head -1`) ends the output quietly, as SIGPIPE ends a C program,
// instead of an unhandled 'error' event with a stack trace. Commands that stream (generate, api) stop writing on their
// own when it happens (src/cli/render.ts); every other error of stdout is still thrown.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code !== 'EPIPE') throw error;
});

process.exitCode = await main(process.argv.slice(2), undefined, { bulkWriteStarting: boundBulkHeap });
