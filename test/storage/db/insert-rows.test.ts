// Multi-row inserts (src/storage/db/insert-rows.ts): on PostgreSQL each column of a batch travels as one binary array
// (src/storage/db/pg-arrays.ts), on SQLite as a VALUES list. Both must store exactly the values given, the awkward ones
// included, and upsert on a key; on PostgreSQL a value its column cannot hold is refused before anything is sent.
import { sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect } from '../../../src/storage/db/connect.js';
import { insertRows, updateRows } from '../../../src/storage/db/insert-rows.js';
import type { Database } from '../../../src/storage/db/tables.js';
import { openTestStorage, TEST_DIALECTS, type TestStorage } from '../../helpers.js';

// Quotes, backslashes, braces and commas (an array literal's own syntax), NUL-free control characters, non-ASCII and
// astral characters, an empty string, and a long value.
const AWKWARD = [
  '',
  'a "quoted" value',
  'back\\slash \\" and {braces}, commas',
  'tab\tnew\nline',
  'é ü ß 中文 🔥',
  'x'.repeat(70_000),
];

describe.each(TEST_DIALECTS)('insertRows (%s)', (dialect) => {
  let db: TestStorage;
  let raw: Kysely<Database>;

  beforeAll(async () => {
    db = await openTestStorage(dialect);
    raw = (await connect(db.url)).db;
  });
  afterAll(async () => {
    await raw.destroy();
    await db.dispose();
  });

  it('stores text, integers, nulls and bytes exactly, in batches of any size', async () => {
    const rows = AWKWARD.map((text, i) => [`CVE-2026-${i}`, text]);
    await raw.transaction().execute((tx) => insertRows(tx, 'feed_kev', ['cve_id', 'entry'], rows, 'fail', 4));
    const stored = await raw.selectFrom('feed_kev').select(['cve_id', 'entry']).orderBy('cve_id').execute();
    expect(stored.map((r) => [r.cve_id, r.entry])).toEqual(rows);

    // Bytes with zeros and every other byte value, an empty document, and a plain Uint8Array viewing part of a larger
    // buffer (a document back from a worker thread): only its own bytes are stored.
    const view = new Uint8Array(new ArrayBuffer(12), 4, 5);
    view.set([9, 0, 34, 92, 255]);
    const bytes = [
      Buffer.from([0, 1, 0, 255, 92, 34, 123, 125]),
      Buffer.from(Array.from({ length: 256 }, (_, i) => i)),
      Buffer.alloc(0),
      view,
    ];
    const documents = bytes.map((doc, i) => ['tenant', `asset-${i}`, doc, AWKWARD[i] ?? '', '']);
    await raw
      .transaction()
      .execute((tx) =>
        insertRows(
          tx,
          'asset_documents',
          ['tenant_id', 'asset_id', 'doc', 'raw_data', 'meta_search'],
          documents,
          'fail',
        ),
      );
    const docs = await raw
      .selectFrom('asset_documents')
      .select(['asset_id', 'doc', 'raw_data'])
      .orderBy('asset_id')
      .execute();
    expect(docs.map((d) => [d.asset_id, Buffer.from(d.doc), d.raw_data])).toEqual(
      documents.map((d) => [d[1], Buffer.from(d[2] as Uint8Array), d[3]]),
    );

    const feeds = [
      ['kev', null, 0, 'a'],
      ['epss', '2026.11.24', -2147483648, null],
      ['exploitdb', 'v"1\\', 2147483647, '🔥'],
    ];
    await raw.transaction().execute((tx) =>
      insertRows(
        tx,
        'feeds',
        ['feed', 'version', 'entries', 'source', 'loaded_at'],
        feeds.map((f) => [...f, 'now']),
        'fail',
      ),
    );
    const read = await raw
      .selectFrom('feeds')
      .select(['feed', 'version', 'entries', 'source'])
      .orderBy('feed')
      .execute();
    expect(read.map((r) => [r.feed, r.version, Number(r.entries), r.source])).toEqual(
      [...feeds].sort((a, b) => String(a[0]).localeCompare(String(b[0]))),
    );
  });

  it('upserts on a key, keeping the columns named in keep', async () => {
    const scores = [
      ['CVE-2026-1', 0.00123, 0.5],
      ['CVE-2026-2', 0.97, 0.99999],
    ];
    await raw
      .transaction()
      .execute((tx) => insertRows(tx, 'feed_epss', ['cve_id', 'epss', 'percentile'], scores, { key: ['cve_id'] }));
    await raw.transaction().execute((tx) =>
      insertRows(tx, 'feed_epss', ['cve_id', 'epss', 'percentile'], [['CVE-2026-2', 0.5, 0.25]], {
        key: ['cve_id'],
        keep: ['percentile'],
      }),
    );
    const stored = await raw
      .selectFrom('feed_epss')
      .select(['cve_id', 'epss', 'percentile'])
      .orderBy('cve_id')
      .execute();
    // `real` on PostgreSQL: compared as single-precision values, as they are stored.
    const single = (n: number) => Math.fround(n);
    expect(stored.map((r) => [r.cve_id, single(Number(r.epss)), single(Number(r.percentile))])).toEqual([
      ['CVE-2026-1', single(0.00123), single(0.5)],
      ['CVE-2026-2', single(0.5), single(0.99999)],
    ]);
  });

  it('updates the named columns of the given keys of one tenant, and nothing else', async () => {
    const risk = (tenant: string, id: string) => ({
      tenant_id: tenant,
      id,
      risk_type_id: 'type',
      integration_id: 'integration',
      primary_asset_id: `asset-${id}`,
      severity_level: 'LOW',
      lifecycle_state: 'OPEN',
      resource_type: 'AWS::EC2::Instance',
      discovered_at: '2026-01-01T00:00:00Z',
      score: 1.5,
      doc: Buffer.from('{}'),
      derived: 1,
    });
    const rows = ['tenant-a', 'tenant-b'].flatMap((t) => ['r1', 'r2', 'r3'].map((id) => risk(t, id)));
    await raw.insertInto('risks').values(rows).execute();
    // Bytes, an awkward text, a null and a float; r3 is not named, and tenant-b has the same ids.
    const doc = Buffer.from([0, 255, 92, 34, 123]);
    await raw.transaction().execute((tx) =>
      updateRows(
        tx,
        'risks',
        'tenant-a',
        ['id'],
        ['doc', 'resource_type', 'score'],
        [
          ['r1', doc, AWKWARD[2], 9.25],
          ['r2', Buffer.alloc(0), null, 0.1],
        ],
        1,
      ),
    );
    const stored = await raw
      .selectFrom('risks')
      .select(['tenant_id', 'id', 'doc', 'resource_type', 'score', 'severity_level', 'primary_asset_id'])
      .orderBy('tenant_id')
      .orderBy('id')
      .execute();
    const unchanged = (t: string, id: string) => [
      t,
      id,
      Buffer.from('{}'),
      'AWS::EC2::Instance',
      1.5,
      'LOW',
      `asset-${id}`,
    ];
    expect(
      stored.map((r) => [
        r.tenant_id,
        r.id,
        Buffer.from(r.doc),
        r.resource_type,
        Number(r.score),
        r.severity_level,
        r.primary_asset_id,
      ]),
    ).toEqual([
      ['tenant-a', 'r1', doc, AWKWARD[2], 9.25, 'LOW', 'asset-r1'],
      ['tenant-a', 'r2', Buffer.alloc(0), null, 0.1, 'LOW', 'asset-r2'],
      unchanged('tenant-a', 'r3'),
      unchanged('tenant-b', 'r1'),
      unchanged('tenant-b', 'r2'),
      unchanged('tenant-b', 'r3'),
    ]);
  });

  // SQLite stores whatever it is given (its columns have affinities, not types); PostgreSQL's binary arrays are
  // written on the client, so a value of the wrong type must be refused there, naming the column.
  it.skipIf(dialect !== 'postgres')(
    'refuses a value its column cannot hold, naming it, and writes none of the batch',
    async () => {
      const count = async () =>
        Number(
          (
            await raw
              .selectFrom('feeds')
              .select(sql<number>`count(*)`.as('n'))
              .executeTakeFirstOrThrow()
          ).n,
        );
      const before = await count();
      const attempt = raw.transaction().execute((tx) =>
        insertRows(
          tx,
          'feeds',
          ['feed', 'version', 'entries', 'loaded_at'],
          [
            ['first', null, 1, 'now'],
            ['second', null, 1.5, 'now'],
          ],
          'fail',
        ),
      );
      await expect(attempt).rejects.toThrow('column feeds.entries (integer) cannot hold a value of type number');
      expect(await count()).toBe(before);
    },
  );
});
