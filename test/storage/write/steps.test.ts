// The bulk write's steps that hold no SQL, alone: what a run touched (src/storage/write/touched.ts) and the record
// buffer (src/storage/write/buffer.ts). The steps with SQL are tested over both databases beside this file.
import { describe, expect, it } from 'vitest';
import { importKinds, type ImportKind, type RecordsByKind } from '../../../src/domain/records.js';
import { recordBuffer, type KindWriters } from '../../../src/storage/write/buffer.js';
import { touchedByRun } from '../../../src/storage/write/touched.js';

describe('touched', () => {
  it('keeps the assets touched per tenant until taken, and a tenant-wide touch over them', () => {
    const touched = touchedByRun();
    touched.touch('t1', 'a');
    touched.touch('t1', 'b');
    touched.touch('t2', 'c');
    touched.touch('t2');
    touched.touch('t2', 'd');
    touched.wrote('t3');
    expect([...touched.tenants()]).toEqual(['t1', 't2']);
    expect(touched.take()).toEqual(
      new Map<string, 'all' | Set<string>>([
        ['t1', new Set(['a', 'b'])],
        ['t2', 'all'],
      ]),
    );
    expect(touched.take()).toEqual(new Map());
    expect([...touched.tenants()]).toEqual([]);
    // The tenants written stay through a take: their data versions move at the end of the run.
    expect([...touched.written()]).toEqual(['t1', 't2', 't3']);
  });
});

describe('record buffer', () => {
  const asset = (tenantId: string, id: string) => ({ tenantId, asset: { id } }) as unknown as RecordsByKind['asset'];
  const finding = (tenantId: string, assetId: string, vulnerabilityId: string) =>
    ({ tenantId, vulnerability: { assetId, vulnerabilityId } }) as unknown as RecordsByKind['vulnerability'];

  const recording = () => {
    const batches: [ImportKind, unknown[]][] = [];
    const writer = (kind: ImportKind) => async (records: unknown[]) => void batches.push([kind, records]);
    const writers = Object.fromEntries(importKinds.map((k) => [k, writer(k)])) as unknown as KindWriters;
    return { batches, buffer: recordBuffer(writers) };
  };

  it('writes a kind when its batch is full, and what is left when flushed, tenants first', async () => {
    const { batches, buffer } = recording();
    for (let i = 0; i < 400; i += 1) await buffer.add('asset', asset('t', `a${i}`));
    expect(batches.map(([kind, records]) => [kind, records.length])).toEqual([['asset', 400]]);
    await buffer.add('vulnerability', finding('t', 'a1', 'CVE-1'));
    await buffer.add('tenant', { tenantId: 't', organizationId: 'o', name: null });
    await buffer.flushAll();
    expect(batches.slice(1).map(([kind, records]) => [kind, records.length])).toEqual([
      ['tenant', 1],
      ['vulnerability', 1],
    ]);
    await buffer.flushAll();
    expect(batches).toHaveLength(3);
  });

  it('writes what it holds of an asset before a read of that asset, and nothing for another', async () => {
    const { batches, buffer } = recording();
    await buffer.add('asset', asset('t', 'a1'));
    await buffer.add('vulnerability', finding('t', 'a1', 'CVE-1'));
    await buffer.flushFor('asset', 't', 'a2');
    await buffer.flushFor('vulnerability', 'other', 'a1');
    expect(batches).toEqual([]);
    await buffer.flushFor('vulnerability', 't', 'a1');
    expect(batches.map(([kind]) => kind)).toEqual(['vulnerability']);
    await buffer.flushFor('asset', 't', 'a1');
    expect(batches.map(([kind]) => kind)).toEqual(['vulnerability', 'asset']);
  });
});
