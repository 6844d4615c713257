// A dismissal that expires while no server runs (pipeline.md §6): `secinv serve` runs the expiry runner at start and
// every SECINV_EXPIRY_INTERVAL_SECONDS. A server killed (SIGKILL) before the dismissal's end leaves it dismissed; the
// next start reopens it, once: the API then serves it OPEN and the change log holds one `risk.reopened`, cause expiry.
import { describe, expect, it } from 'vitest';
import { derivedRiskId } from '../../src/domain/risk-engine.js';
import { A1, fixture } from '../fixtures.js';
import { createKey, openStorageWithKeys, TENANT_A } from '../helpers.js';
import { died, killLeft } from './scan-processes.js';
import { exitCodeAfter, spawnServe } from './serve-process.js';

const RISK = derivedRiskId(TENANT_A, 'secinv.exposed-kev-vulnerability', A1);
const ENV = { SECINV_EXPIRY_INTERVAL_SECONDS: '1' };

describe('a dismissal that expires across a server killed before its end', () => {
  it('is reopened once by the next start', async () => {
    const { opened } = await openStorageWithKeys(fixture, []);
    const key = await createKey(opened.storage, TENANT_A);
    const get = async <T>(base: string, path: string): Promise<T> => {
      const response = await fetch(`${base}${path}`, { headers: { authorization: `Bearer ${key}` } });
      expect(response.status).toBe(200);
      return (await response.json()) as T;
    };
    const state = async (base: string) =>
      (await get<{ data: { lifecycleState: string }[] }>(base, `/v1/tenant/risks?ids=${encodeURIComponent(RISK)}`))
        .data[0]?.lifecycleState;
    expect(await opened.storage.deriveRisks(TENANT_A, new Date().toISOString())).toBeDefined();

    const first = await spawnServe(opened.url, ENV);
    try {
      const until = new Date(Date.now() + 4000).toISOString();
      expect(
        await opened.storage.setRiskLifecycle(
          TENANT_A,
          RISK,
          'DISMISSED_ACCEPTED',
          new Date().toISOString(),
          undefined,
          until,
        ),
      ).toBe(true);
      expect(await state(`http://127.0.0.1:${first.port}`)).toBe('DISMISSED_ACCEPTED');
      const dead = died(first.child);
      first.child.kill('SIGKILL');
      expect(await dead).toBe('SIGKILL');
      // Killed before the end: the first server's runs had nothing due.
      expect(Date.now()).toBeLessThan(Date.parse(until));

      const again = await spawnServe(opened.url, ENV);
      const base = `http://127.0.0.1:${again.port}`;
      try {
        let seen = await state(base);
        for (let tries = 0; seen !== 'OPEN' && tries < 200; tries += 1) {
          await new Promise((resolve) => setTimeout(resolve, 100));
          seen = await state(base);
        }
        expect(seen).toBe('OPEN');
        expect(Date.now()).toBeGreaterThanOrEqual(Date.parse(until));
        // One more interval at least: a later run finds nothing left to do.
        await new Promise((resolve) => setTimeout(resolve, 1500));
        const changes = await get<{ data: { riskId: string; cause: { kind: string } }[] }>(
          base,
          '/v1/tenant/changes?types=risk.reopened',
        );
        expect(changes.data).toHaveLength(1);
        expect(changes.data[0]).toMatchObject({ riskId: RISK, cause: { kind: 'expiry' } });
      } finally {
        await exitCodeAfter(again.child, 'SIGTERM');
      }
    } finally {
      killLeft(first.child);
      await opened.dispose();
    }
  }, 60_000);
});
