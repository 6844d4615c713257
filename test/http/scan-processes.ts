// What the kill tests of scans share (scans-kill*.test.ts): a report whose effect is known, calls to a real server,
// a scan polled to its end, the scan events a server logs, and what a scan may leave behind in the database.
import type { ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { sql } from 'kysely';
import { expect } from 'vitest';
import { connect } from '../../src/storage/db/connect.js';

export const REPORT = readFileSync(
  new URL('../fixtures/ingest/trivy/trivy-image-teamdojo-multi-target.json', import.meta.url),
);
/** The report's findings on its one asset. */
export const FINDINGS = 5;
/** The shortest lease the setting takes: a killed server's claim expires after it. */
export const LEASE_S = 5;
/** The points of a scan a server is killed at (SECINV_TEST_SCAN_KILL_AT). */
export const KILL_POINTS = ['queued', 'claimed', 'read', 'settled', 'committed'] as const;

export type Scan = Record<string, unknown> & { status: string; startedAt: string | null; finishedAt: string | null };

export interface Answer {
  status: number;
  location: string | null;
  body: { data: Scan; meta?: { total?: number } };
}

export const call = async (base: string, key: string, path: string, init: RequestInit = {}): Promise<Answer> => {
  const response = await fetch(`${base}${path}`, {
    ...init,
    headers: { authorization: `Bearer ${key}`, ...(init.headers as Record<string, string> | undefined) },
  });
  return {
    status: response.status,
    location: response.headers.get('location'),
    body: (await response.json()) as never,
  };
};

/** Uploads REPORT as a CI job would: with an Idempotency-Key, so that it may be sent again when no answer came. */
export const uploadReport = (base: string, key: string, region: string, idempotencyKey: string): Promise<Answer> =>
  call(base, key, `/v1/tenant/scans?provider=AWS&region=${region}&name=${region}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'idempotency-key': idempotencyKey },
    body: REPORT,
  });

/** Polls the scan until it ended. */
export async function endedScan(base: string, key: string, location: string): Promise<Scan> {
  for (;;) {
    const scan = (await call(base, key, location)).body.data;
    if (scan.status === 'succeeded' || scan.status === 'failed') return scan;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Checks a scan of REPORT ended as one application of it: its asset holds the findings once, added by this scan. */
export async function expectAppliedOnce(base: string, key: string, scan: Scan, region: string): Promise<void> {
  expect(scan.status).toBe('succeeded');
  const summary = scan.summary as { assetIds: string[]; assets: unknown; findings: unknown };
  expect({ assets: summary.assets, findings: summary.findings }).toEqual({
    assets: { created: 1, updated: 0, unchanged: 0 },
    findings: { added: FINDINGS, updated: 0, unchanged: 0, resolved: 0 },
  });
  const [assetId] = summary.assetIds;
  expect(assetId).toContain(region);
  const findings = await call(base, key, `/v1/tenant/vulnerabilities?assetIds=${encodeURIComponent(assetId!)}`);
  expect(findings.body.meta?.total).toBe(FINDINGS);
  // One scan row however often the upload was sent.
  const named = await call(base, key, `/v1/tenant/scans?perPage=100`);
  expect((named.body.data as unknown as Scan[]).filter((s) => s.name === region)).toHaveLength(1);
}

/** A process a test may leave running when it fails, killed. */
export const killLeft = (child: ChildProcess): void => {
  if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
};

/** Resolves with the signal that ended the process. */
export const died = (child: ChildProcess): Promise<NodeJS.Signals | null> =>
  new Promise((resolve) => child.once('exit', (_code, signal) => resolve(signal)));

export interface ScanEvent {
  scanId: string;
  status: string;
}

/** The scan events the server logs from now on (it must run with SECINV_LOG_LEVEL=info). */
export function scanEvents(child: ChildProcess): ScanEvent[] {
  const events: ScanEvent[] = [];
  let rest = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    const lines = (rest + chunk.toString()).split('\n');
    rest = lines.pop()!;
    for (const line of lines) {
      if (!line.includes('"msg":"scan"')) continue;
      const { scanId, status } = JSON.parse(line) as ScanEvent;
      events.push({ scanId, status });
    }
  });
  return events;
}

/** Queue entries, stored bodies and spool files left in the database (all none once every scan ended). */
async function leftovers(url: string): Promise<{ queued: number; bodies: number }> {
  const { db } = await connect(url);
  try {
    const count = async (table: string) =>
      (await sql<{ n: number }>`select count(*) as n from ${sql.table(table)}`.execute(db)).rows.map((r) =>
        Number(r.n),
      )[0]!;
    const queued = await count('scan_queue');
    if (!url.startsWith('sqlite:')) return { queued, bodies: await count('scan_bodies') };
    const spool = `${url.slice('sqlite:'.length)}-scans`;
    return { queued, bodies: existsSync(spool) ? readdirSync(spool).length : 0 };
  } finally {
    await db.destroy();
  }
}

/**
 * Checks that every scan ended left nothing: at once on PostgreSQL; on SQLite a body whose scan ended as its process
 * was killed goes when a runner starts, which a server that already listens may not have done yet.
 */
export async function expectNoLeftovers(url: string): Promise<void> {
  const until = Date.now() + 5000;
  let left = await leftovers(url);
  while (url.startsWith('sqlite:') && left.bodies > 0 && Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    left = await leftovers(url);
  }
  expect(left).toEqual({ queued: 0, bodies: 0 });
}
