// Every environment variable secinv reads is documented in --help, from the one table in src/config.ts.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ENVIRONMENT, loadConfig } from '../src/config.js';
import { runCli } from './cli/run.js';

const configSource = readFileSync(new URL('../src/config.ts', import.meta.url), 'utf8');
const readNames = [...new Set(configSource.match(/SECINV_[A-Z_]+/g))].sort();

describe('environment variables', () => {
  it('the table lists every variable the configuration reads, and no other', () => {
    expect(readNames.length).toBeGreaterThan(10);
    expect(ENVIRONMENT.map(([name]) => name).sort()).toEqual(readNames);
  });

  it('secinv --help and secinv serve --help list every one of them', async () => {
    for (const args of [['--help'], ['serve', '--help']]) {
      const { code, stdout } = await runCli(...args);
      expect(code).toBe(0);
      for (const name of readNames) expect(stdout, `${args.join(' ')}: ${name}`).toContain(`  ${name}  `.trimEnd());
    }
  });

  it('a variable in the table is really read', () => {
    expect(loadConfig({}, { SECINV_PORT: '9999', SECINV_DB_POOL_MAX: '3' })).toMatchObject({
      port: 9999,
      dbPoolMax: 3,
    });
  });

  it('kept bodies take 32 MiB unless set; 0 keeps none; a bad value names the variable', () => {
    expect(loadConfig({}, {}).keptBodiesMb).toBe(32);
    expect(loadConfig({}, { SECINV_KEPT_BODIES_MB: '0' }).keptBodiesMb).toBe(0);
    expect(loadConfig({}, { SECINV_KEPT_BODIES_MB: '256' }).keptBodiesMb).toBe(256);
    expect(() => loadConfig({}, { SECINV_KEPT_BODIES_MB: '-1' })).toThrow(/invalid SECINV_KEPT_BODIES_MB '-1'/);
  });

  it('ended scans are kept 400 days unless set; a whole number of days, at least 1', () => {
    expect(loadConfig({}, {}).scanRetentionDays).toBe(400);
    expect(loadConfig({}, { SECINV_SCAN_RETENTION_DAYS: '1' }).scanRetentionDays).toBe(1);
    for (const bad of ['0', '1.5', 'forever'])
      expect(() => loadConfig({}, { SECINV_SCAN_RETENTION_DAYS: bad })).toThrow(/invalid SECINV_SCAN_RETENTION_DAYS/);
  });

  it('changes are kept 400 days unless set; a whole number of days, 1 to 100,000', () => {
    expect(loadConfig({}, {}).changesRetentionDays).toBe(400);
    expect(loadConfig({}, { SECINV_CHANGES_RETENTION_DAYS: '30' }).changesRetentionDays).toBe(30);
    for (const bad of ['0', '1.5', '100001', 'forever'])
      expect(() => loadConfig({}, { SECINV_CHANGES_RETENTION_DAYS: bad })).toThrow(
        /invalid SECINV_CHANGES_RETENTION_DAYS/,
      );
  });

  it('the wait for a pooled connection defaults to 20 s, never past the request timeout unless set', () => {
    expect(loadConfig({}, {}).dbQueueTimeoutMs).toBe(20_000);
    expect(loadConfig({}, { SECINV_REQUEST_TIMEOUT_MS: '5000' }).dbQueueTimeoutMs).toBe(5000);
    expect(
      loadConfig({}, { SECINV_REQUEST_TIMEOUT_MS: '5000', SECINV_DB_QUEUE_TIMEOUT_MS: '8000' }).dbQueueTimeoutMs,
    ).toBe(8000);
  });
});
