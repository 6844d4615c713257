// The rows of `npm run bench:http` (the performance targets of docs/BENCHMARKS.md "Requests against the ceiling"), the
// page whose count no cache holds, and the reading of wrk's report (bench/http.ts, bench/workers.ts).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** The filtered page of the rows. */
export const FILTERED_PAGE =
  '/v1/tenant/assets?providers=AWS&severityLevels=CRITICAL,HIGH&sortBy=vulnerabilityScore&sortOrder=DESC';

/**
 * A wrk script, written into `folder`, that asks `page` with a new riskScoreGte each request (always below every score,
 * so the page is the same): the count is never cached.
 */
export function uncachedScript(folder: string, page: string): string {
  const script = join(folder, 'uncached.lua');
  writeFileSync(
    script,
    `local n = 0\nrequest = function()\n  n = n + 1\n  return wrk.format(nil, "${page}&riskScoreGte=0." .. string.format("%012d", n))\nend\n`,
  );
  return script;
}

export interface Row {
  label: string;
  path: string;
  headers?: Record<string, string>;
  /** Sends the tag of the row's 200 in If-None-Match. */
  revalidate?: boolean;
  /** A new `riskScoreGte` each request, so the count of matches is never cached. */
  uncached?: boolean;
  /**
   * Served by a second server that keeps no bodies (`cacheBytes: 0`): every request builds its body, as a request of
   * a page not asked before at the tenant's data version does. Without it, a row repeating one URL is answered from
   * the body kept under its tag after the first request (docs/DESIGN.md §65).
   */
  built?: boolean;
  /** The body the ceiling sends for this row, when not the row's own (a 304 is compared with its page). */
  ceilingOf?: string;
  target: string;
}

export function rowsOf(page: string, assetId: string, assets: number): Row[] {
  const last = Math.ceil(assets / 100);
  const asset = `/v1/tenant/assets/${encodeURIComponent(assetId)}`;
  const thousands = '/v1/tenant/vulnerabilities?perPage=2000';
  return [
    { label: 'assets, 2 filters + sort, count not cached', path: page, uncached: true, target: '≤ 10 ms a request' },
    { label: 'same page, count cached', path: page, target: '≥ 0.12×, p99 ≤ 50 ms' },
    { label: 'same page, count cached, built each request', path: page, built: true, target: '' },
    { label: 'same page revalidated (304)', path: page, revalidate: true, ceilingOf: page, target: '≥ 0.5×' },
    { label: 'same page gzip', path: page, headers: { 'accept-encoding': 'gzip' }, ceilingOf: page, target: '≥ 0.08×' },
    { label: 'get one asset', path: asset, target: '≥ 0.3×' },
    { label: 'get one asset, built each request', path: asset, built: true, target: '' },
    { label: 'assets page 1 of 100, built each request', path: '/v1/tenant/assets', built: true, target: '' },
    {
      label: `assets page ${last} of 100 (the last), built each request`,
      path: `/v1/tenant/assets?page=${last}`,
      built: true,
      target: '≤ 2× page 1',
    },
    {
      label: 'vulnerabilities packageName=openssl, built each request',
      path: '/v1/tenant/vulnerabilities?packageName=openssl',
      built: true,
      target: '≤ 20 ms a request',
    },
    { label: 'vulnerabilities perPage=2000', path: thousands, target: '≥ 0.1×, no 503' },
    { label: 'vulnerabilities perPage=2000, built each request', path: thousands, built: true, target: '' },
  ];
}

export interface Measured {
  rps: number;
  requests: number;
  p50Ms: number;
  p99Ms: number;
  non2xx: number;
  /** Requests wrk gave up on (no answer within its timeout). */
  timeouts: number;
  /** Server CPU seconds over the run. */
  cpu: number;
}

/**
 * `taskset`'s arguments for one wrk run on core 1 (the server is on core 0), one thread, with its latency report. wrk
 * gives up on a request after 2 s by default and leaves it out of every figure: it waits as long as the server does.
 */
export const wrkFlags = (connections: number | string, duration: number | string): string[] => [
  '-c',
  '1',
  'wrk',
  '-t1',
  `-c${connections}`,
  `-d${duration}s`,
  '--timeout',
  '30s',
  '--latency',
];

const toMs = (value: string, unit: string): number =>
  Number(value) * (unit === 'us' ? 0.001 : unit === 's' ? 1000 : unit === 'm' ? 60_000 : 1);

/** Requests per second, requests, p50, p99 and non-2xx answers from `wrk --latency`'s report. */
export function parseWrk(output: string): Omit<Measured, 'cpu'> {
  const rps = /Requests\/sec:\s+([\d.]+)/.exec(output)?.[1];
  const requests = /(\d+) requests in/.exec(output)?.[1];
  const p50 = /\s50%\s+([\d.]+)(us|ms|s|m)\b/.exec(output);
  const p99 = /\s99%\s+([\d.]+)(us|ms|s|m)\b/.exec(output);
  const non2xx = /Non-2xx or 3xx responses: (\d+)/.exec(output)?.[1];
  const timeouts = /Socket errors:.*timeout (\d+)/.exec(output)?.[1];
  if (rps === undefined || requests === undefined) throw new Error(`unreadable wrk report:\n${output}`);
  return {
    rps: Number(rps),
    requests: Number(requests),
    p50Ms: p50 ? toMs(p50[1]!, p50[2]!) : 0,
    p99Ms: p99 ? toMs(p99[1]!, p99[2]!) : 0,
    non2xx: Number(non2xx ?? 0),
    timeouts: Number(timeouts ?? 0),
  };
}
