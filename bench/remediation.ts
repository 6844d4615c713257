// Remediation metrics benchmark (pipeline.md §6): the two metric endpoints over a year of a 1M-finding tenant. The
// metrics read only the rollup (src/storage/changes/rollup.ts), whose size depends on the history, not on the
// inventory: this fills it with the rows the rollup's arithmetic makes of a simulated year (each finding first
// observed on a day of the 365, 60% of them resolved after a number of days drawn per severity, due by the default
// SLA), then times each request over HTTP: the first answer (nothing kept) and the median and 99th percentile of fresh
// answers (each asked for a range no earlier request asked, so no kept body answers it).
// Usage: npm run bench:remediation [-- --db sqlite|postgres --findings N --runs N]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { buildApp } from '../src/app.js';
import { createTenantKey } from '../src/cli/keys.js';
import { addDays, DEFAULT_SLA, dayOf } from '../src/domain/remediation.js';
import { openStorage } from '../src/storage/index.js';
import { insertRows } from '../src/storage/db/insert-rows.js';
import { connect } from '../src/storage/db/connect.js';
import { defaultConnectOptions } from '../src/storage/db/connection.js';

const { values: args } = parseArgs({
  options: {
    db: { type: 'string', default: 'sqlite' },
    findings: { type: 'string', default: '1000000' },
    runs: { type: 'string', default: '30' },
  },
});
const FINDINGS = Number(args.findings);
const RUNS = Number(args.runs);
const TENANT = '44444444-4444-4444-8444-444444444444';

const dir = mkdtempSync(join(tmpdir(), 'secinv-bench-remediation-'));
const pgName = `secinv_bench_remediation_${process.pid}`;
const pgAdmin = process.env.SECINV_BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const admin = async (text: string) => {
  const client = new pg.Client({ connectionString: pgAdmin });
  await client.connect();
  await client.query(text).finally(() => client.end());
};
if (args.db === 'postgres') await admin(`create database ${pgName}`);
const url = args.db === 'postgres' ? pgAdmin.replace(/\/[^/]*$/, `/${pgName}`) : `sqlite:${join(dir, 'bench.db')}`;

/** A deterministic generator (mulberry32). */
let seed = 0x5eed;
const random = () => {
  seed = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
};
/** Days to fix: exponential around a median per severity. */
const MEDIAN_FIX: Record<number, number> = { 5: 7, 4: 20, 3: 45, 2: 90, 1: 60, 0: 60 };
const SEVERITY_SHARE: [number, number][] = [
  [5, 0.05],
  [4, 0.2],
  [3, 0.45],
  [2, 0.25],
  [1, 0.03],
  [0, 0.02],
];
const SLA_BY_LEVEL: Record<number, number | undefined> = {
  5: DEFAULT_SLA.CRITICAL,
  4: DEFAULT_SLA.HIGH,
  3: DEFAULT_SLA.MEDIUM,
  2: DEFAULT_SLA.LOW,
};

const today = dayOf(Date.now());
const first = addDays(today, -364);
/** Day numbers from `first` (0) as dates, made once: the simulation counts in day numbers. */
const DAY_NAMES = Array.from({ length: 365 + 400 }, (_, i) => addDays(first, i));
const TODAY = 364;
const days = new Map<number, [number, number, number, number]>();
const fixes = new Map<string, number>();
const add = (day: number, severity: number, i: 0 | 1 | 2 | 3, n: number) => {
  const key = day * 8 + severity;
  const row = days.get(key) ?? [0, 0, 0, 0];
  row[i] += n;
  days.set(key, row);
};
const t0 = performance.now();
for (let f = 0; f < FINDINGS; f += 1) {
  let pick = random();
  let severity = 0;
  for (const [level, share] of SEVERITY_SHARE) {
    severity = level;
    if ((pick -= share) < 0) break;
  }
  const opened = Math.floor(random() * 365);
  const sla = SLA_BY_LEVEL[severity];
  const due = sla === undefined ? null : opened + sla;
  add(opened, severity, 0, 1);
  add(opened, severity, 2, 1);
  if (due !== null) add(Math.max(opened, due), severity, 3, 1);
  if (random() >= 0.6) continue;
  const fix = Math.floor(-Math.log(1 - random()) * (MEDIAN_FIX[severity]! / Math.LN2));
  const resolved = opened + fix;
  if (resolved > TODAY) continue;
  add(resolved, severity, 1, 1);
  add(resolved, severity, 2, -1);
  if (due !== null) add(Math.max(resolved, due), severity, 3, -1);
  const within = due === null ? -1 : resolved <= due ? 1 : 0;
  const key = `${resolved}|${severity}|${fix}|${within}`;
  fixes.set(key, (fixes.get(key) ?? 0) + 1);
}
process.stdout.write(
  `simulated ${FINDINGS.toLocaleString('en-US')} findings over 365 days in ${((performance.now() - t0) / 1000).toFixed(1)} s: ` +
    `${days.size.toLocaleString('en-US')} day rows, ${fixes.size.toLocaleString('en-US')} time-to-fix rows\n`,
);

const storage = await openStorage(url);
try {
  await storage.createTenant({ tenantId: TENANT, organizationId: TENANT, name: 'bench' });
  // Written as the rollup stores them, on a connection of the bench's own.
  const { db } = await connect(url, defaultConnectOptions);
  await db.transaction().execute(async (tx) => {
    await insertRows(
      tx,
      'finding_days',
      ['tenant_id', 'day', 'severity', 'opened', 'resolved', 'open_delta', 'overdue_delta'],
      [...days].map(([key, [opened, resolved, open, overdue]]) => [
        TENANT,
        DAY_NAMES[Math.floor(key / 8)],
        key % 8,
        opened,
        resolved,
        open,
        overdue,
      ]),
      'fail',
    );
    await insertRows(
      tx,
      'finding_fixes',
      ['tenant_id', 'day', 'severity', 'fix_days', 'within', 'count'],
      [...fixes].map(([key, count]) => {
        const [day, severity, fix, within] = key.split('|').map(Number) as [number, number, number, number];
        return [TENANT, DAY_NAMES[day], severity, fix, within, count];
      }),
      'fail',
    );
  });
  await db.destroy();
  const { key } = await createTenantKey(storage, TENANT, 'bench');
  const apiStorage = await openStorage(url, { role: 'api' });
  const app = await buildApp({ storage: apiStorage, http: { rateLimitPerMinute: 0 } });
  const address = await app.listen({ host: '127.0.0.1', port: 0 });
  const headers = { authorization: `Bearer ${key}` };
  const lines: string[] = [
    `| Request (${args.db}, ${FINDINGS.toLocaleString('en-US')} findings, a year) | First | Median of ${RUNS} fresh | p99 | Bytes |`,
    '|---|---|---|---|---|',
  ];
  const cases: [string, (i: number) => string][] = [
    ['findings, a year by day', (i) => `/v1/tenant/metrics/findings?from=${addDays(first, i)}&to=${today}`],
    ['findings, a year by week', (i) => `/v1/tenant/metrics/findings?from=${addDays(first, i)}&interval=week`],
    ['findings, a year by month', (i) => `/v1/tenant/metrics/findings?from=${addDays(first, i)}&interval=month`],
    ['findings, the last 90 days (the console)', (i) => `/v1/tenant/metrics/findings?to=${addDays(today, -i)}`],
    ['remediation, a year', (i) => `/v1/tenant/metrics/remediation?from=${addDays(first, i)}`],
    ['remediation, a quarter', (i) => `/v1/tenant/metrics/remediation?from=${addDays(today, -89 - i)}`],
  ];
  for (const [label, path] of cases) {
    const times: number[] = [];
    let bytes = 0;
    for (let i = 0; i <= RUNS; i += 1) {
      const started = performance.now();
      const res = await fetch(`${address}${path(i)}`, { headers });
      const body = await res.arrayBuffer();
      times.push(performance.now() - started);
      if (res.status !== 200) throw new Error(`${path(i)}: ${res.status} ${Buffer.from(body).toString()}`);
      bytes = body.byteLength;
    }
    const [firstTime, ...rest] = times;
    const sorted = [...rest].sort((a, b) => a - b);
    const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
    lines.push(
      `| ${label} | ${firstTime!.toFixed(1)} ms | ${at(0.5).toFixed(1)} ms | ${at(0.99).toFixed(1)} ms | ${bytes.toLocaleString('en-US')} |`,
    );
  }
  // The storage's part alone, without HTTP: the reads and the sums.
  const scope = { tenantId: TENANT, dataVersion: 0 };
  const timed = async (label: string, call: () => Promise<unknown>) => {
    const times: number[] = [];
    for (let i = 0; i < RUNS; i += 1) {
      const started = performance.now();
      await call();
      times.push(performance.now() - started);
    }
    times.sort((a, b) => a - b);
    lines.push(`| storage only: ${label} | | ${times[Math.floor(times.length / 2)]!.toFixed(1)} ms | | |`);
  };
  const year = { from: first, to: today, today };
  await timed('findings, a year by day', () => apiStorage.findingMetrics(scope, year, 'day'));
  await timed('remediation, a year', () => apiStorage.remediationMetrics(scope, year));
  process.stdout.write(`${lines.join('\n')}\n`);
  await app.close();
  await apiStorage.close();
} finally {
  await storage.close();
  rmSync(dir, { recursive: true, force: true });
  if (args.db === 'postgres') await admin(`drop database ${pgName} with (force)`);
}
