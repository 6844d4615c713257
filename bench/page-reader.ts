// The reading client of the serve benchmarks (bench/serve-clients.ts startReader): asset pages from the base URL given,
// the key on stdin, until stdin closes.
import { readPages } from './serve-clients.js';

await readPages(process.argv[2]!);
