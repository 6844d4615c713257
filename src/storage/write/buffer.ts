// Records held per kind until a batch is full, then handed to the write-rows step. A read of what is stored about an
// asset first writes what the run holds of it (flushFor), so that it reads the run's own writes.
import type { ImportKind, RecordsByKind } from '../../domain/records.js';

const BATCH_ROWS: Record<ImportKind, number> = {
  tenant: 500,
  environment: 500,
  integration: 500,
  assetGroup: 200,
  exemption: 200,
  asset: 400,
  vulnerability: 800,
  risk: 500,
};

export type KindWriters = { [K in ImportKind]: (records: RecordsByKind[K][]) => Promise<void> };

export interface RecordBuffer {
  /** Holds a record; writes its kind's batch when it is full. */
  add<K extends ImportKind>(kind: K, record: RecordsByKind[K]): Promise<void>;
  /** Writes what is held of a kind. */
  flush(kind: ImportKind): Promise<void>;
  /** Writes what is held of every kind, tenants first: nothing depends on write order but counts. */
  flushAll(): Promise<void>;
  /** Writes the held assets or findings when one of them is of the asset. */
  flushFor(kind: 'asset' | 'vulnerability', tenantId: string, assetId: string): Promise<void>;
}

/** `beforeFullBatch` runs before each batch written because it is full (the write is a bulk one). */
export function recordBuffer(writers: KindWriters, beforeFullBatch?: () => Promise<void>): RecordBuffer {
  const pending: { [K in ImportKind]: RecordsByKind[K][] } = {
    tenant: [],
    environment: [],
    integration: [],
    assetGroup: [],
    exemption: [],
    asset: [],
    vulnerability: [],
    risk: [],
  };
  const flush = async <K extends ImportKind>(kind: K): Promise<void> => {
    const records = pending[kind];
    if (records.length === 0) return;
    pending[kind] = [] as RecordsByKind[K][] as (typeof pending)[K];
    await writers[kind](records);
  };
  return {
    async add(kind, record) {
      (pending[kind] as (typeof record)[]).push(record);
      if (pending[kind].length < BATCH_ROWS[kind]) return;
      await beforeFullBatch?.();
      await flush(kind);
    },
    flush,
    async flushAll() {
      for (const kind of Object.keys(pending) as ImportKind[]) await flush(kind);
    },
    async flushFor(kind, tenantId, assetId) {
      const held =
        kind === 'asset'
          ? pending.asset.some((r) => r.tenantId === tenantId && r.asset.id === assetId)
          : pending.vulnerability.some((r) => r.tenantId === tenantId && r.vulnerability.assetId === assetId);
      if (held) await flush(kind);
    },
  };
}
