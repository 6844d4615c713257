// `secinv import` killed with SIGKILL (a power cut, the OOM killer) at ten points of its run, each reached
// deterministically through SECINV_TEST_IMPORT_KILL_AT: before the commit the database is exactly as it was, rows,
// schema and the indexes a first import drops and rebuilds included; after it, wholly the import's; a later import
// succeeds either way. On SQLite it runs twice: beside a reader (this test's own connection: the import writes under
// WAL) and alone (no other connection: a rollback journal, src/storage/db/journal.ts, whose hot journal the next open
// rolls back and whose file is in WAL again after it).
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fileSource, importSources } from '../../src/import/importer.js';
import { openStorage } from '../../src/storage/index.js';
import { contentDigest, introspectSchema } from '../storage/introspect.js';
import { runCli } from '../http/serve-process.js';
import type { Storage } from '../../src/storage/index.js';
import { createTestDatabase, importRecords, ORG_B, TENANT_A, TENANT_B, TEST_DIALECT } from '../helpers.js';
import { assetRecord, findingRecord, ndjson, riskRecord, tenantRecord, type ImportRecord } from '../records.js';

const ASSETS = 700;
/**
 * Points before the commit: opened (migrated); records handed over (asset and finding lines alternate, so the first
 * batch of 400 assets is written at record 799; the risks follow from record 1,401 to the last, 1,450); then each
 * step after the reading. After it: the commit.
 */
const BEFORE_COMMIT = [
  'opened',
  'record:1',
  'record:401',
  'record:801',
  'record:1401',
  'record:1450',
  'read',
  'settled',
  'indexed',
];
const AFTER_COMMIT = ['committed'];

let db: { storage: Storage; url: string; dir: string; drop: () => Promise<void> };
let file: string;
let before: { contents: Record<string, string>; schema: unknown };
/** Whether this test's connection is closed while the imports run (the import is then alone with the file). */
let alone = false;
const state = async () => {
  // Any secinv command opens the file for writing first, which rolls back a hot journal a kill left; a read-only open
  // (the digests below) cannot.
  if (alone) await (await openStorage(db.url)).close();
  return {
    contents: await contentDigest(TEST_DIALECT, db.url),
    schema: await introspectSchema(TEST_DIALECT, db.url),
  };
};
/** The contents but the tenants' data versions, which every import moves on. */
const withoutVersions = ({ tenants: _, ...rest }: Record<string, string>) => rest;

/** A database holding two tenants, and the file to import into it; `alone`: this test's connection closed after. */
async function prepare(closeAfter: boolean): Promise<void> {
  alone = false;
  const database = await createTestDatabase();
  db = { ...database, storage: await openStorage(database.url) };
  const tenants = [tenantRecord(TENANT_A), tenantRecord(TENANT_B, { organizationId: ORG_B })];
  expect((await importRecords(db.storage, tenants)).problems).toEqual([]);
  const records: ImportRecord[] = [];
  for (let i = 0; i < ASSETS; i += 1) {
    const id = `sirn:assets:killed-${i}`;
    records.push(assetRecord(id, { name: `bucket ${i}` }), findingRecord(id, `CVE-2024-${1000 + i}`));
  }
  for (let i = 0; i < 50; i += 1) records.push(riskRecord(`risk-${i}`, { primaryAssetId: `sirn:assets:killed-${i}` }));
  file = join(db.dir, 'import.ndjson');
  writeFileSync(file, ndjson(records));
  before = await state();
  if (closeAfter) {
    alone = true;
    await db.storage.close();
  }
}

const killedAt = async (point: string) => {
  const run = await runCli(['import', '--quiet', '--db', db.url, file], { SECINV_TEST_IMPORT_KILL_AT: point });
  expect(run.signal, `${point}: ${run.stderr}`).toBe('SIGKILL');
  expect(run.stdout).toBe('');
};

for (const mode of TEST_DIALECT === 'sqlite' ? (['beside a reader', 'alone'] as const) : (['beside a reader'] as const))
  describe(`an import killed with SIGKILL, ${mode}`, () => {
    beforeAll(() => prepare(mode === 'alone'));
    afterAll(async () => {
      if (!alone) await db.storage.close();
      await db.drop();
    });

    // A process per point, each a few seconds on a loaded machine.
    it(
      `before its commit (${BEFORE_COMMIT.length} points) leaves the database exactly as it was`,
      { timeout: 180_000 },
      async () => {
        const hotJournals: string[] = [];
        for (const point of BEFORE_COMMIT) {
          await killedAt(point);
          if (TEST_DIALECT === 'sqlite' && existsSync(`${db.url.slice('sqlite:'.length)}-journal`))
            hotJournals.push(point);
          expect(await state(), point).toEqual(before);
        }
        // Alone, the import wrote under a rollback journal, which the kills past its first writes left behind.
        if (alone) expect(hotJournals.length).toBeGreaterThan(5);
        else expect(hotJournals).toEqual([]);
      },
    );

    it(
      `after its commit (${AFTER_COMMIT.join(', ')}) leaves it wholly imported; a later import succeeds`,
      { timeout: 60_000 },
      async () => {
        for (const point of AFTER_COMMIT) {
          await killedAt(point);
          const killed = await state();
          expect(killed.contents.assets, point).not.toBe(before.contents.assets);
          expect(killed.schema, point).toEqual(before.schema);
          // The same file again is an upsert of the same records: anything the kill had left half written would
          // change.
          const storage = alone ? await openStorage(db.url) : db.storage;
          try {
            const again = await importSources(storage, [fileSource(file)], { dryRun: false });
            expect(again.problems).toEqual([]);
            expect(again.counts).toMatchObject({ asset: ASSETS, vulnerability: ASSETS, risk: 50 });
          } finally {
            if (alone) await storage.close();
          }
          expect(withoutVersions((await state()).contents), point).toEqual(withoutVersions(killed.contents));
        }
      },
    );
  });
