// Benchmarks on generated data: import rate and API latency on a large tenant, written to docs/BENCHMARKS.md.
// Usage: npm run bench [-- --assets N --findings-per-asset N --risks N --runs N --db URL]
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { cpus } from 'node:os';
import { buildApp, defaultHttpOptions } from '../src/app.js';
import { createTenantKey } from '../src/cli/keys.js';
import { summaryLine } from '../src/import/importer.js';
import { importGenerated } from './import.js';
import { largeTenant } from './large-tenant.js';
import { openStorage } from '../src/storage/index.js';

const { options, dbUrl, runs, out: outArg } = largeTenant(30, { out: { type: 'string' } });
const dialectName = dbUrl.startsWith('postgres') ? 'postgres' : 'sqlite';
const out = outArg ?? `docs/bench/${dialectName}.md`;

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2
    ? (s[(s.length - 1) / 2] as number)
    : ((s[s.length / 2 - 1] as number) + (s[s.length / 2] as number)) / 2;
};
const ms = (n: number) => `${n.toFixed(2)} ms`;

const storage = await openStorage(dbUrl);
const lines: string[] = [];
let tenants = await storage.listTenants();
if (tenants.length === 0) {
  const result = await importGenerated(storage, options);
  const { seconds } = result;
  const records = Object.values(result.counts).reduce((a, b) => a + b, 0);
  if (result.problemCount > 0) throw new Error(`bench import failed: ${JSON.stringify(result.problems.slice(0, 3))}`);
  lines.push(
    `- Import of the generated file (validate + write + derive, one transaction): ${records.toLocaleString('en-US')} records in ${seconds.toFixed(1)} s = ${Math.round(records / seconds).toLocaleString('en-US')} records/s`,
    `  (${summaryLine(result, false)})`,
  );
  tenants = await storage.listTenants();
} else {
  lines.push(`- Import: reused the existing database ${dbUrl} (delete it to measure the import)`);
}
const tenant = tenants[0]!;
const { key } = await createTenantKey(storage, tenant.tenantId, 'bench');
// The server reads as it does in production: through the API role (PostgreSQL row-level security, one transaction
// per request).
const apiStorage = await openStorage(dbUrl, { role: 'api' });
// No rate limit: the bench sends thousands of requests a minute with one key.
const app = await buildApp({ storage: apiStorage, http: { rateLimitPerMinute: 0 } });
const address = await app.listen({ host: '127.0.0.1', port: 0 });
const headers = { authorization: `Bearer ${key}` };

const firstId = (
  (await (await fetch(`${address}/v1/tenant/assets?perPage=1&sortBy=name`, { headers })).json()) as {
    data: { id: string }[];
  }
).data[0]!.id;

// The metrics' year (a history the import made: each finding opened on its firstObservedAt; bench:remediation has one
// with resolutions).
const yearAgo = new Date(Date.now() - 364 * 86_400_000).toISOString().slice(0, 10);
const queries: [string, string][] = [
  [
    'two filters and a sort',
    '/v1/tenant/assets?providers=AWS&severityLevels=CRITICAL,HIGH&sortBy=vulnerabilityScore&sortOrder=DESC',
  ],
  [
    'two filters and a sort (region, public; riskScore)',
    '/v1/tenant/assets?regions=us-east-1&isPubliclyExposed=true&sortBy=riskScore&sortOrder=DESC',
  ],
  ['first page, default order, 100 rows', '/v1/tenant/assets'],
  ['1000 rows', '/v1/tenant/assets?perPage=1000'],
  ['deep page (page 500 of 100)', '/v1/tenant/assets?page=500'],
  ['services + environment + sort by name', '/v1/tenant/assets?services=EC2&environmentIds=production&sortBy=name'],
  ['query (name substring)', '/v1/tenant/assets?query=prod'],
  ['metadata (rawData substring)', '/v1/tenant/assets?metadata=running'],
  ['get one asset with rawData', `/v1/tenant/assets/${encodeURIComponent(firstId)}?include=rawData`],
  ['vulnerabilities: first page (default order)', '/v1/tenant/vulnerabilities'],
  ['vulnerabilities: packageName filter', '/v1/tenant/vulnerabilities?packageName=log4j-core'],
  [
    'vulnerabilities: packageName + targetClass, 1000 rows',
    '/v1/tenant/vulnerabilities?packageName=openssl&targetClass=os-pkgs&perPage=1000',
  ],
  [
    'vulnerabilities: CRITICAL with KEV, 2000 rows',
    '/v1/tenant/vulnerabilities?severityLevels=CRITICAL&hasKev=true&perPage=2000',
  ],
  [
    'vulnerabilities: regions + sort by lastObservedAt',
    '/v1/tenant/vulnerabilities?regions=us-east-1&sortBy=lastObservedAt&sortOrder=DESC',
  ],
  ['vulnerabilities: exempted, with exemptions', '/v1/tenant/vulnerabilities?isExempted=true&perPage=500'],
  ['vulnerabilities: deep page (page 2000 of 100)', '/v1/tenant/vulnerabilities?page=2000'],
  ['vulnerabilities: overdue', '/v1/tenant/vulnerabilities?isOverdue=true'],
  ['metrics: findings, the last 90 days by day', '/v1/tenant/metrics/findings'],
  ['metrics: findings, a year by week', '/v1/tenant/metrics/findings?from=' + yearAgo + '&interval=week'],
  ['metrics: remediation, a year', '/v1/tenant/metrics/remediation?from=' + yearAgo],
];

lines.push(
  '',
  '| Request | First (count computed) | Median of next ' + runs + ' | Rows | Bytes |',
  '|---|---|---|---|---|',
);
for (const [label, path] of queries) {
  const times: number[] = [];
  let rows = 0;
  let bytes = 0;
  for (let i = 0; i <= runs; i += 1) {
    const t0 = performance.now();
    const res = await fetch(`${address}${path}`, { headers });
    const body = await res.arrayBuffer();
    times.push(performance.now() - t0);
    if (res.status !== 200) throw new Error(`${path}: ${res.status} ${Buffer.from(body).toString()}`);
    bytes = body.byteLength;
    const parsed = JSON.parse(Buffer.from(body).toString()) as { data: unknown };
    rows = Array.isArray(parsed.data) ? parsed.data.length : 1;
  }
  const [first, ...rest] = times;
  lines.push(
    `| ${label}: \`${path.replace(/\|/g, '\\|')}\` | ${ms(first!)} | ${ms(median(rest))} | ${rows} | ${bytes.toLocaleString('en-US')} |`,
  );
}
// Risks: follow the cursor through every batch; a keyset page deep in the list should cost what the first does.
lines.push(
  '',
  '| Risk batches (perPage=100, following meta.cursor) | First request (count computed) | First batch | 500th batch | Median of all | Batches |',
  '|---|---|---|---|---|---|',
);
for (const [label, query] of [
  ['default order (discoveredAt desc)', ''],
  ['sortBy=score', 'sortBy=score'],
  ['include=primaryAsset,integration', 'include=primaryAsset,integration'],
] as const) {
  // The very first request of a filter set also counts the matches (then cached); time the pages themselves.
  const warm = performance.now();
  await (await fetch(`${address}/v1/tenant/risks?perPage=100${query ? `&${query}` : ''}`, { headers })).arrayBuffer();
  const countedFirst = performance.now() - warm;
  const times: number[] = [];
  let cursor: string | null = null;
  do {
    const t0 = performance.now();
    const res = await fetch(
      `${address}/v1/tenant/risks?perPage=100${query ? `&${query}` : ''}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      { headers },
    );
    const body = (await res.json()) as { meta: { cursor: string | null } };
    times.push(performance.now() - t0);
    if (res.status !== 200) throw new Error(`risks: ${res.status} ${JSON.stringify(body)}`);
    cursor = body.meta.cursor;
  } while (cursor !== null);
  const at500 = times[499];
  lines.push(
    `| ${label} | ${ms(countedFirst)} | ${ms(times[0]!)} | ${at500 === undefined ? 'n/a' : ms(at500)} | ${ms(median(times))} | ${times.length} |`,
  );
}

// The change log from its start, 1000 changes a page (the tenant's import appended one change per record it created),
// each page after a vulnerability page of 1000 (pipeline.md §4: the one within the time of the other), so that the
// machine's other load falls on both alike. Both from a server that keeps no bodies (docs/DESIGN.md §65): each page
// is built, as every page of the log is (each another URL) and a vulnerability page asked for the first time is.
const builtApp = await buildApp({
  storage: apiStorage,
  http: { rateLimitPerMinute: 0, compression: { ...defaultHttpOptions.compression, cacheBytes: 0 } },
});
const builtAddress = await builtApp.listen({ host: '127.0.0.1', port: 0 });
const timed = async (path: string) => {
  const t0 = performance.now();
  const res = await fetch(`${builtAddress}${path}`, { headers });
  const body = (await res.json()) as { data: unknown[]; meta: { cursor?: string } };
  if (res.status !== 200) throw new Error(`${path}: ${res.status} ${JSON.stringify(body)}`);
  return { ms: performance.now() - t0, body };
};
const vulnerabilityPage = '/v1/tenant/vulnerabilities?perPage=1000';
await timed(vulnerabilityPage); // the list's first request counts its matches (then cached): not a page's time
const pages = { changes: [] as number[], vulnerabilities: [] as number[] };
let changes = 0;
for (let cursor: string | undefined; ;) {
  pages.vulnerabilities.push((await timed(vulnerabilityPage)).ms);
  const page = await timed(`/v1/tenant/changes?perPage=1000${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
  if (page.body.data.length === 0) break; // caught up: the answer that says so is not a page of 1000
  pages.changes.push(page.ms);
  changes += page.body.data.length;
  cursor = page.body.meta.cursor;
}
await builtApp.close();
lines.push(
  '',
  '| Pages of 1000, built, one of each in turn | First | Median | Slowest | Pages | Rows |',
  '|---|---|---|---|---|---|',
);
for (const [label, times, rows] of [
  [`vulnerabilities: \`${vulnerabilityPage}\``, pages.vulnerabilities, pages.vulnerabilities.length * 1000],
  ['the change log from its start, following `meta.cursor`: `/v1/tenant/changes?perPage=1000`', pages.changes, changes],
] as const)
  lines.push(
    `| ${label} | ${ms(times[0]!)} | ${ms(median(times))} | ${ms(Math.max(...times))} | ${times.length} | ${rows.toLocaleString('en-US')} |`,
  );

await app.close();
await apiStorage.close();
await storage.close();

const report = [
  '# Benchmarks',
  '',
  `Run by \`npm run bench\` on ${new Date().toISOString().slice(0, 10)}: Node ${process.version}, ${cpus().length} cores (${cpus()[0]?.model ?? 'unknown CPU'}), database ${dialectName === 'postgres' ? 'PostgreSQL 15 (same machine, loopback)' : 'SQLite (WAL)'}.`,
  `Data: \`secinv generate --seed bench --tenants 1 --assets ${options.assets} --findings-per-asset ${options.findingsPerAsset} --risks ${options.risks}\`.`,
  'Latency is measured over HTTP on loopback, one request at a time, body fully read. "First" includes computing',
  '`meta.total`; later requests reuse the cached count (docs/DESIGN.md §6).',
  '',
  ...lines,
  '',
].join('\n');
mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, report);
process.stdout.write(`${report}\n`);
