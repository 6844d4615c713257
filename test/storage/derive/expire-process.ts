// A server process's expiry runner, alone: `node --import tsx expire-process.ts URL NOW` runs Storage.expireDue(NOW)
// once, says `waiting` on stdout when another write holds the tenant, then prints what the run did as JSON.
import { openStorage } from '../../../src/storage/index.js';

const [url, now] = process.argv.slice(2);
if (url === undefined || now === undefined) throw new Error('usage: expire-process.ts URL NOW');
const storage = await openStorage(url);
try {
  const run = await storage.expireDue(new Date(now), () => process.stdout.write('waiting\n'));
  process.stdout.write(`${JSON.stringify(run)}\n`);
} finally {
  await storage.close();
}
