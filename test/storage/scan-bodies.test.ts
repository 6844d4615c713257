// Bytes a server process left behind when it died (docs/DESIGN.md §98): SQLite's spool keeps a body whose scan ended
// between the commit and the body's removal, and files of uploads never queued; a runner's sweep frees those and
// only those. PostgreSQL's bodies end with their scan's transaction: its sweep has nothing to do.
import { existsSync, readdirSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import type { Storage } from '../../src/storage/index.js';
import { importRecords, TENANT_A, TEST_DIALECTS, withTestDatabase } from '../helpers.js';
import { newScan, tenantRecord } from '../records.js';

const HOUR = 60 * 60 * 1000;

const accept = async (storage: Storage) => {
  const scan = newScan();
  const answer = await storage.acceptScan(
    scan,
    (async function* () {
      yield Buffer.from('{}');
    })(),
    () => ({ sizeBytes: 2, sha256: 'x', requestHash: scan.id }),
  );
  expect(answer.kind).toBe('created');
  return scan.id;
};

describe.each(TEST_DIALECTS)('the sweep of scan bodies (%s)', (dialect) => {
  it('frees the bytes of ended scans and of old files no scan names, and keeps the rest', async () =>
    withTestDatabase(dialect, async ({ storage, url }, db) => {
      expect((await importRecords(storage, [tenantRecord(TENANT_A)])).problems).toEqual([]);
      const ended = await accept(storage);
      const claim = (await storage.claimScan('test', new Date(), 60_000))!;
      expect(claim.scanId).toBe(ended);
      expect(await storage.failScan(claim, [{ message: 'refused' }], new Date().toISOString())).toBe(true);
      const queued = await accept(storage);
      if (dialect === 'postgres') {
        expect(await storage.sweepScanBodies(new Date())).toBe(0);
        const { rows } = await sql<{ id: string }>`select distinct scan_id as id from scan_bodies`.execute(db);
        expect(rows.map((row) => row.id)).toEqual([queued]);
        return;
      }
      const spool = `${url.slice('sqlite:'.length)}-scans`;
      // As a process that died would leave them: the ended scan's body, and uploads never queued, old and new.
      const file = (name: string, ageMs = 0) => {
        writeFileSync(join(spool, name), '{}');
        const at = new Date(Date.now() - ageMs);
        utimesSync(join(spool, name), at, at);
      };
      file(`${ended}.body`);
      const [oldBody, oldPart, freshPart, recent] = [randomUUID(), randomUUID(), randomUUID(), randomUUID()];
      file(`${oldBody}.body`, 3 * HOUR);
      file(`${oldPart}.part`, 3 * HOUR);
      file(`${freshPart}.part`);
      file(`${recent}.body`, HOUR);
      expect(await storage.sweepScanBodies(new Date())).toBe(3);
      expect(readdirSync(spool).sort()).toEqual([`${freshPart}.part`, `${queued}.body`, `${recent}.body`].sort());
      expect(existsSync(join(spool, `${queued}.body`))).toBe(true);
    }));
});
