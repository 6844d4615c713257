// Export benchmark: streamed NDJSON and CSV exports of a generated tenant (default 100,000 assets, ~1,000,000
// findings) from a `secinv serve`-like server in a process of its own, so that its peak RSS is the server's. Per export:
// records, bytes, seconds to the first byte, records per second, the server's CPU time (all its threads) per record and
// its RSS high-water mark after it; then a slow reader (one that takes the findings export at 4 MB/s for a few seconds
// and hangs up), after which the server's peak RSS must not have grown by the size of the result.
// Usage: npm run bench:export [-- --db sqlite|postgres --assets N --findings-per-asset N --keep --findings-only]
import { fork, type ChildProcess } from 'node:child_process';
import { request } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { buildApp } from '../src/app.js';
import { newKey } from '../src/domain/keys.js';
import { openStorage } from '../src/storage/index.js';
import { benchOptions, tenantDatabase } from './tenant.js';

const { values: args } = parseArgs({
  options: {
    db: { type: 'string', default: process.env.SECINV_BENCH_DB ?? 'sqlite' },
    assets: { type: 'string', default: '100000' },
    'findings-per-asset': { type: 'string', default: '10' },
    // PostgreSQL: keep the imported tenant's database for the next run (SQLite always keeps its file under data/).
    keep: { type: 'boolean', default: false },
    // Only the two findings exports (no assets, no slow reader): for comparing changes to the findings export.
    'findings-only': { type: 'boolean', default: false },
    serve: { type: 'string' }, // internal: the server process, given the database URL
  },
});

const mb = (bytes: number) => `${(bytes / 1e6).toFixed(0)} MB`;
const count = (n: number) => Math.round(n).toLocaleString('en-US');

/** The server: the API app over the database, listening on a free port; answers 'rss' with its peak RSS in bytes. */
async function serve(url: string): Promise<void> {
  const storage = await openStorage(url, { role: 'api' });
  const app = await buildApp({ storage, http: { rateLimitPerMinute: 0 } });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  process.send?.({ port: typeof address === 'object' && address ? address.port : 0 });
  process.on('message', (message) => {
    if (message === 'rss') process.send?.({ rss: process.resourceUsage().maxRSS * 1024 });
    // CPU seconds used so far (all threads): per export, a figure that other work on the machine disturbs less.
    if (message === 'cpu') {
      const { user, system } = process.cpuUsage();
      process.send?.({ cpu: (user + system) / 1e6 });
    }
    // The IPC channel keeps the process alive: leave once the server and the database are closed.
    if (message === 'stop')
      void app
        .close()
        .then(async () => storage.close())
        .then(() => process.exit(0));
  });
}

const ask = <T>(child: ChildProcess, message: string, field: string): Promise<T> =>
  new Promise((resolve) => {
    const listener = (reply: Record<string, T>) => {
      if (field in reply) {
        child.off('message', listener);
        resolve(reply[field]!);
      }
    };
    child.on('message', listener);
    if (message !== '') child.send(message);
  });

interface Read {
  records: number;
  bytes: number;
  firstByteMs: number;
  seconds: number;
  complete: boolean;
}

/**
 * GETs a URL and counts the lines of its body (NDJSON records; CSV rows, header included) as it arrives, without
 * keeping it. `bytesPerSecond` reads slowly (pausing the socket) and hangs up after `stopAfter` bytes.
 */
function read(port: number, path: string, key: string, slow?: { bytesPerSecond: number; stopAfter: number }) {
  return new Promise<Read>((resolve, reject) => {
    const started = performance.now();
    const req = request({ host: '127.0.0.1', port, path, headers: { authorization: `Bearer ${key}` } }, (res) => {
      if (res.statusCode !== 200) reject(new Error(`${path}: ${res.statusCode}`));
      let firstByteMs = -1;
      let bytes = 0;
      let newlines = 0;
      res.on('data', (chunk: Buffer) => {
        if (firstByteMs < 0) firstByteMs = performance.now() - started;
        bytes += chunk.length;
        for (let i = chunk.indexOf(10); i >= 0; i = chunk.indexOf(10, i + 1)) newlines += 1;
        if (slow) {
          if (bytes >= slow.stopAfter) {
            req.destroy();
            resolve({
              records: newlines,
              bytes,
              firstByteMs,
              seconds: (performance.now() - started) / 1000,
              complete: false,
            });
            return;
          }
          res.pause();
          setTimeout(() => res.resume(), (chunk.length / slow.bytesPerSecond) * 1000);
        }
      });
      res.on('end', () =>
        resolve({
          records: newlines,
          bytes,
          firstByteMs,
          seconds: (performance.now() - started) / 1000,
          complete: true,
        }),
      );
      res.on('error', reject);
    });
    req.on('error', (error) => (slow ? undefined : reject(error)));
    req.end();
  });
}

async function stop(server: ChildProcess): Promise<void> {
  server.send('stop');
  await new Promise((resolve) => server.once('exit', resolve));
}

async function main(): Promise<void> {
  const options = benchOptions(args.assets, args['findings-per-asset']);
  const dir = mkdtempSync(join(tmpdir(), 'secinv-bench-export-'));
  const db = await tenantDatabase(dir, { db: args.db, options, name: 'export', keep: args.keep });
  try {
    const admin = await openStorage(db.url);
    const [tenant] = await admin.listTenants();
    const key = newKey();
    await admin.insertKey({
      id: key.id,
      tenantId: tenant!.tenantId,
      name: 'bench',
      prefix: key.prefix,
      keyHash: key.keyHash,
      createdAt: new Date().toISOString(),
      expiresAt: null,
    });
    await admin.close();

    const server = fork(fileURLToPath(import.meta.url), ['--serve', db.url], { execArgv: process.execArgv });
    const port = await ask<number>(server, '', 'port');
    const rss = () => ask<number>(server, 'rss', 'rss');
    process.stdout.write(
      `${args.db}, ${count(options.assets)} assets x ${options.findingsPerAsset} findings; server peak RSS at start ${mb(await rss())}\n`,
    );
    const findings = ['/v1/tenant/vulnerabilities?format=ndjson', '/v1/tenant/vulnerabilities?format=csv'];
    const assets = ['/v1/tenant/assets?format=ndjson&sortBy=riskScore&sortOrder=DESC', '/v1/tenant/assets?format=csv'];
    for (const path of args['findings-only'] ? findings : [...findings, ...assets]) {
      const cpu = await ask<number>(server, 'cpu', 'cpu');
      const r = await read(port, path, key.key);
      const cpuSeconds = (await ask<number>(server, 'cpu', 'cpu')) - cpu;
      const records = path.includes('format=csv') ? r.records - 1 : r.records;
      process.stdout.write(
        `${path}: ${count(records)} records, ${mb(r.bytes)} in ${r.seconds.toFixed(1)} s ` +
          `(first byte ${r.firstByteMs.toFixed(0)} ms), ${count(records / r.seconds)} records/s; ` +
          `server CPU ${cpuSeconds.toFixed(1)} s (${((cpuSeconds / records) * 1e6).toFixed(1)} µs/record); ` +
          `server peak RSS ${mb(await rss())}\n`,
      );
    }
    if (args['findings-only']) return await stop(server);
    const before = await rss();
    const slow = await read(port, '/v1/tenant/vulnerabilities?format=ndjson', key.key, {
      bytesPerSecond: 4e6,
      stopAfter: 16e6,
    });
    process.stdout.write(
      `slow reader (4 MB/s, hung up after ${mb(slow.bytes)} in ${slow.seconds.toFixed(1)} s): ` +
        `server peak RSS ${mb(before)} before, ${mb(await rss())} after\n`,
    );
    await stop(server);
  } finally {
    await db.drop();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (args.serve !== undefined) await serve(args.serve);
else await main();
