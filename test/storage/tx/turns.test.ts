// On PostgreSQL the bulk writes to one tenant (imports, ingests, risk derivations, a risk's state) take turns
// (src/storage/tx/turns.ts takeTenantTurn, docs/DESIGN.md §87, §90): each reads the tenant's assets, findings and risks and writes what it made of
// them. Without the turn, two ingests of one new image at once both read no image, both inserted it, and the second
// failed on the key with PostgreSQL's own message; a derivation beside an ingest wrote risks from findings the ingest
// was replacing. Writes to different tenants still run side by side. SQLite has one writer at a time.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IngestResult } from '../../../src/ingest/ingest.js';
import {
  besideDatabase,
  heldIngest,
  ingestInto as ingest,
  pause,
  textSource as text,
  trivyImage as trivy,
} from '../../ingest/beside.js';
import { ORG_A, ORG_B, TENANT_A, TENANT_B, TEST_DIALECTS, type TestStorage } from '../../helpers.js';

if (TEST_DIALECTS.includes('postgres'))
  describe('bulk writes to one tenant, on postgres', () => {
    let t: TestStorage;
    let close: () => Promise<void>;
    beforeAll(async () => {
      ({ t, close } = await besideDatabase([
        [TENANT_A, ORG_A],
        [TENANT_B, ORG_B],
      ]));
    });
    afterAll(async () => close?.());

    it('take turns: a second ingest of a new image, a derivation and a risk state wait for the first; another tenant does not', async () => {
      // The first ingest writes the new image, then waits inside its transaction for its second report's bytes.
      const image = trivy('image', ['CVE-2026-1111', 'CVE-2026-2222']);
      const { running: first, release } = await heldIngest(t.storage, TENANT_A, text('image.json', image));
      const waits: string[] = [];
      const second = ingest(t.storage, TENANT_A, [text('image.json', image)], (r) => waits.push(`ingest ${r}`));
      const deriving = t.storage.deriveRisks(TENANT_A, '2026-11-20T11:00:00.000Z', (r) => waits.push(`derive ${r}`));
      // A derivation writes back each risk's state as it read it: a state set meanwhile would be lost.
      const dismissing = t.storage.setRiskLifecycle(
        TENANT_A,
        'no-such-risk',
        'DISMISSED_ACCEPTED',
        '2026-11-20T11:00:00.000Z',
        (r) => waits.push(`dismiss ${r}`),
      );
      // Another tenant's ingest runs through while the first holds tenant A.
      const other = await ingest(t.storage, TENANT_B, [text('image.json', trivy('image', ['CVE-2026-1111']))]);
      expect(other.problems).toEqual([]);
      for (let tries = 0; waits.length < 3 && tries < 100; tries += 1) await pause(30);
      release(trivy('rest', ['CVE-2026-3333']));
      const outcomes = await Promise.allSettled([first, second, deriving, dismissing]);
      /** What a run said of its first file's image and findings, or why it failed. */
      const said = (o: PromiseSettledResult<unknown>) => {
        if (o.status === 'rejected') return String(o.reason);
        const f = (o.value as IngestResult).files[0];
        return f && { created: f.assetsCreated, unchanged: f.assetsUnchanged, added: f.added, same: f.unchanged };
      };
      // The second read the image as the first had written it: the same findings again change nothing.
      expect({ waits: waits.sort(), first: said(outcomes[0]), second: said(outcomes[1]) }).toEqual({
        waits: ['derive tenant', 'dismiss tenant', 'ingest tenant'],
        first: { created: 1, unchanged: 0, added: 2, same: 0 },
        second: { created: 0, unchanged: 1, added: 0, same: 2 },
      });
      expect(outcomes[2].status).toBe('fulfilled');
      expect(outcomes[3]).toEqual({ status: 'fulfilled', value: false });
    });
  });
