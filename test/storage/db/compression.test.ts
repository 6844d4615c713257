// PostgreSQL compresses the stored documents with lz4 where the server has it (migration 0017, docs/DESIGN.md §76).
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateRecords } from '../../../src/generate/generator.js';
import { createTestDatabase, importRecords, TEST_DIALECTS } from '../../helpers.js';
import { openStorage, type Storage } from '../../../src/storage/index.js';

const DOCUMENTS = [
  ['asset_documents', 'doc'],
  ['asset_documents', 'raw_data'],
  ['checks', 'doc'],
  ['risks', 'doc'],
  ['vulnerability_documents', 'doc'],
] as const;

describe.skipIf(!TEST_DIALECTS.includes('postgres'))('document compression (PostgreSQL)', () => {
  let storage: Storage;
  let client: pg.Client;
  let drop: () => Promise<void>;
  beforeAll(async () => {
    const database = await createTestDatabase('postgres');
    drop = database.drop;
    storage = await openStorage(database.url);
    const lines = [...generateRecords({ seed: 'lz4', tenants: 1, assets: 40, findingsPerAsset: 4, risks: 40 })];
    const records = lines.map((l) => JSON.parse(l) as { kind: string; record: Record<string, unknown> });
    expect(
      (
        await importRecords(
          storage,
          records.map((r) => [r.kind, r.record]),
        )
      ).problems,
    ).toEqual([]);
    client = new pg.Client({ connectionString: database.url });
    await client.connect();
  });
  afterAll(async () => {
    await client.end();
    await storage.close();
    await drop();
  });

  it('sets lz4 on every document column where the server has it, and writes new documents with it', async () => {
    const { rows } = await client.query<{ lz4: boolean }>(
      `select 'lz4' = any(enumvals) as lz4 from pg_settings where name = 'default_toast_compression'`,
    );
    const methods = await client.query<{ table: string; column: string; method: string }>(
      `select c.relname as "table", a.attname as "column", a.attcompression as method
       from pg_attribute a join pg_class c on c.oid = a.attrelid join pg_namespace n on n.oid = c.relnamespace
       where n.nspname = current_schema() and a.attcompression <> '' order by 1, 2`,
    );
    const expected = rows[0]?.lz4 === true ? DOCUMENTS.map(([table, column]) => ({ table, column, method: 'l' })) : [];
    expect(methods.rows).toEqual(expected);
    if (rows[0]?.lz4 !== true) return;
    // Documents over the threshold were compressed as they were written, all with lz4.
    const written = await client.query<{ method: string; n: string }>(
      `select pg_column_compression(doc) as method, count(*) as n from risks
       where pg_column_compression(doc) is not null group by 1`,
    );
    expect(written.rows.map((r) => r.method)).toEqual(['lz4']);
    expect(Number(written.rows[0]!.n)).toBeGreaterThan(0);
  });
});
