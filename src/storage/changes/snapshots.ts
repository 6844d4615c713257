// Exports read in one snapshot with its change-log position (pipeline.md §4, docs/DESIGN.md §103): the list reads of an
// export built over one held transaction instead of a transaction per batch.
import type { Kysely } from 'kysely';
import type { SqlDialect } from '../db/dialect.js';
import type { Database } from '../db/tables.js';
import { assetBatchStore } from '../read/assets/batches.js';
import { riskStore } from '../read/risks.js';
import { vulnerabilityStore } from '../read/vulnerabilities/list.js';
import { holdRead, snapshotLimit } from '../tx/snapshot.js';
import { tenantState } from '../tx/tenant.js';
import { tenantReader, type TenantReader } from '../tx/read.js';
import type { Snapshot, Storage, TenantScope } from '../types.js';
import { changeStore } from './read.js';

export interface SnapshotSource {
  /**
   * The reader a snapshot's transaction is held on: the pool's on PostgreSQL, a connection of its own on SQLite;
   * undefined where none can be held (SQLite in memory, or not in WAL).
   */
  holder: () => { read: TenantReader; done: () => Promise<void> } | undefined;
  /** The reader of single reads, for where no transaction can be held: each batch then reads a snapshot of its own. */
  shared: TenantReader;
  /** Snapshots held at once by this process. */
  held: number;
  dialect: SqlDialect;
  packageWalkRows: number;
}

/** The list reads an export makes, over one reader. */
function readsOver(read: TenantReader, scope: TenantScope, { dialect, packageWalkRows }: SnapshotSource) {
  const assets = assetBatchStore(read, dialect);
  const risks = riskStore(read);
  const findings = vulnerabilityStore(read, dialect, packageWalkRows);
  const changes = changeStore(read, dialect);
  return {
    listAssetBatch: (query, size, after) => assets.listAssetBatch(scope, query, size, after),
    listRisks: (query, after) => risks.listRisks(scope, query, after),
    listVulnerabilities: (query, after) => findings.listVulnerabilities(scope, query, after),
    listChanges: (query, after) => changes.listChanges(scope, query, after),
  } satisfies Omit<Snapshot, 'position' | 'close'>;
}

export function snapshotStore(source: SnapshotSource): Pick<Storage, 'openSnapshot'> {
  const places = snapshotLimit(source.held);
  const positionOf = (read: TenantReader, tenantId: string) =>
    read(tenantId, async (db) => (await tenantState(db, tenantId)).position);
  return {
    async openSnapshot(scope: TenantScope): Promise<Snapshot | undefined> {
      if (!places.take()) return undefined;
      const holder = source.holder();
      if (holder === undefined) {
        places.give();
        const position = await positionOf(source.shared, scope.tenantId);
        return { position, ...readsOver(source.shared, scope, source), close: async () => undefined };
      }
      const ended = async () => {
        await holder.done();
        places.give();
      };
      let hold: Awaited<ReturnType<typeof holdRead>> | undefined;
      try {
        hold = await holdRead(holder.read, scope.tenantId);
        // The first statement in it: it fixes the snapshot every later read sees.
        const position = await positionOf(hold.read, scope.tenantId);
        let closed: Promise<void> | undefined;
        const { close } = hold;
        return { position, ...readsOver(hold.read, scope, source), close: () => (closed ??= close().then(ended)) };
      } catch (error) {
        await hold?.close();
        await ended();
        throw error;
      }
    },
  };
}

/** The holder of snapshots: a new read-only connection each (SQLite), or the pool's reader (PostgreSQL). */
export function snapshotHolder(
  pooled: TenantReader | undefined,
  openConnection: () => Kysely<Database> | undefined,
): SnapshotSource['holder'] {
  return () => {
    if (pooled !== undefined) return { read: pooled, done: async () => undefined };
    const own = openConnection();
    return own && { read: tenantReader(own, 'sqlite'), done: () => own.destroy() };
  };
}
