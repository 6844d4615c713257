// The `secinv` executable: bin/secinv.js runs the compiled copy, `npm run dev` this source through tsx.
import { main } from './main.js';

process.exitCode = await main(process.argv.slice(2));
