// Before each test file: worker threads that the code under test starts from its sources run the bundle the global
// setup built from those same sources (src/lib/thread.ts), rather than each thread compiling them again under tsx.
// test/lib/thread.test.ts starts one from its sources, the way `npm run bench` does.
import { dirname } from 'node:path';
import { inject } from 'vitest';
import { startBuiltWorkersFrom } from '../src/lib/thread.js';

startBuiltWorkersFrom(dirname(inject('cliBundle')));
