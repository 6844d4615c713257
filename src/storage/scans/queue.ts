// The scan queue (docs/DESIGN.md §97): accepting an upload, claiming the next scan to apply, and ending one. A
// tenant's scans are applied one at a time in acceptance order: a claim takes only the oldest unfinished scan of its
// tenant, and only when no live claim holds it. `scan_queue` is global (it names the tenant of each entry, like the
// feeds), so a claim reads one table whatever the tenant; every other statement is of one tenant.
import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from '../db/tables.js';
import { tenantReader } from '../tx/read.js';
import { writeTransaction } from '../tx/write.js';
import type { AcceptedScan, ClaimedScan, Dialect, NewScan, ScanProblem } from '../types.js';
import { scanRecord } from './records.js';
import { pieces, readSpooledBody, removeSpooledBody, spoolBody, spooledFiles } from './spool.js';

/** How long an idempotency key names the scan it created (pipeline.md §2). */
const IDEMPOTENCY_MS = 24 * 60 * 60 * 1000;
/** Claims of one scan after which it is not tried again: its process died that many times while applying it. */
export const MAX_SCAN_ATTEMPTS = 3;
/**
 * A spooled file no scan names is left over once nothing wrote it for this long: longer than any upload is received
 * (SECINV_REQUEST_TIMEOUT_MS is at most an hour) and then queued.
 */
const ORPHAN_MS = 2 * 60 * 60 * 1000;

/** Rolls an accepting transaction back once the upload turned out to repeat an earlier one. */
class Repeated extends Error {
  constructor(readonly answer: AcceptedScan) {
    super('repeated upload');
  }
}

const isUniqueViolation = (error: unknown): boolean => (error as { code?: unknown }).code === '23505';

/** Where a database keeps bodies: a spool folder (SQLite) or its own table (PostgreSQL). */
export type BodyPlace = { kind: 'folder'; folder: string } | { kind: 'table' };

export function scanQueue(db: Kysely<Database>, dialect: Dialect, place: BodyPlace) {
  /** The earlier scan of this idempotency key within a day: the same upload again (200) or another one (409). */
  const earlier = async (tx: Kysely<Database>, scan: NewScan, requestHash: string): Promise<AcceptedScan | null> => {
    if (scan.idempotencyKey === null) return null;
    const row = await tx
      .selectFrom('scans')
      .selectAll()
      .where('tenant_id', '=', scan.tenantId)
      .where('idempotency_key', '=', scan.idempotencyKey)
      .executeTakeFirst();
    if (row === undefined) return null;
    if (Date.parse(row.submitted_at) + IDEMPOTENCY_MS < Date.parse(scan.submittedAt)) {
      // An older use of the key names nothing any more: the key is free for this upload.
      await tx
        .updateTable('scans')
        .set({ idempotency_key: null })
        .where('tenant_id', '=', scan.tenantId)
        .where('id', '=', row.id)
        .execute();
      return null;
    }
    return row.request_hash === requestHash ? { kind: 'repeated', scan: scanRecord(row) } : { kind: 'conflict' };
  };

  const queue = async (tx: Kysely<Database>, scan: NewScan, sizeBytes: number, sha256: string, requestHash: string) => {
    const found = await earlier(tx, scan, requestHash);
    if (found !== null) throw new Repeated(found);
    const row = {
      tenant_id: scan.tenantId,
      id: scan.id,
      status: 'queued',
      name: scan.name,
      format: null,
      options: JSON.stringify(scan.options),
      size_bytes: sizeBytes,
      sha256,
      key_id: scan.keyId,
      idempotency_key: scan.idempotencyKey,
      request_hash: requestHash,
      submitted_at: scan.submittedAt,
      started_at: null,
      finished_at: null,
      summary: null,
      gate: null,
      problems: '[]',
    };
    await tx.insertInto('scans').values(row).execute();
    await tx
      .insertInto('scan_queue')
      .values({ tenant_id: scan.tenantId, scan_id: scan.id, owner: null, claimed_until: null, attempts: 0 })
      .execute();
    return scanRecord(row);
  };

  return {
    /**
     * Stores the body and queues the scan, all or nothing: a body cut off (the client gone, the size limit) leaves no
     * scan and no bytes. `measured` gives the size and digest of the bytes once they have all been read.
     */
    async acceptScan(
      scan: NewScan,
      body: AsyncIterable<Buffer>,
      measured: () => { sizeBytes: number; sha256: string; requestHash: string },
    ): Promise<AcceptedScan> {
      const settle = async (write: () => Promise<AcceptedScan>, onRepeat: () => void): Promise<AcceptedScan> => {
        try {
          return await write();
        } catch (error) {
          if (error instanceof Repeated) {
            onRepeat();
            return error.answer;
          }
          // Two uploads with one idempotency key at once: the second meets the first's row.
          if (!isUniqueViolation(error)) throw error;
          onRepeat();
          const { requestHash } = measured();
          const found = await tenantReader(db, dialect)(scan.tenantId, (tx) => earlier(tx, scan, requestHash));
          if (found === null) throw error;
          return found;
        }
      };
      if (place.kind === 'folder') {
        await spoolBody(place.folder, scan.id, pieces(body));
        const { sizeBytes, sha256, requestHash } = measured();
        const removeBody = () => removeSpooledBody(place.folder, scan.id);
        return settle(
          () =>
            writeTransaction(db, dialect, async (tx) => ({
              kind: 'created' as const,
              scan: await queue(tx, scan, sizeBytes, sha256, requestHash),
            })),
          removeBody,
        ).catch((error: unknown) => {
          // Not queued (the database refused): no scan will read the bytes.
          removeBody();
          throw error;
        });
      }
      return settle(
        () =>
          tenantReader(
            db,
            dialect,
            'read write',
          )(scan.tenantId, async (tx) => {
            let part = 0;
            for await (const piece of pieces(body)) {
              await tx
                .insertInto('scan_bodies')
                .values({ tenant_id: scan.tenantId, scan_id: scan.id, part, bytes: piece })
                .execute();
              part += 1;
            }
            const { sizeBytes, sha256, requestHash } = measured();
            return { kind: 'created' as const, scan: await queue(tx, scan, sizeBytes, sha256, requestHash) };
          }),
        () => undefined,
      );
    },

    /**
     * Takes the oldest scan that may run now, for `leaseMs`: the oldest unfinished scan of its tenant, not held by a
     * live claim. A scan whose process died MAX_SCAN_ATTEMPTS times applying it ends `failed` (interrupted) instead.
     */
    claimScan: (owner: string, now: Date, leaseMs: number): Promise<ClaimedScan | undefined> =>
      writeTransaction(db, dialect, async (tx) => {
        const at = now.toISOString();
        const lock = dialect === 'postgres' ? sql`for update skip locked` : sql``;
        const { rows } = await sql<{ seq: number; tenant_id: string; scan_id: string; attempts: number }>`
          select q.seq, q.tenant_id, q.scan_id, q.attempts from scan_queue as q
          where (q.claimed_until is null or q.claimed_until < ${at})
            and not exists (select 1 from scan_queue as p where p.tenant_id = q.tenant_id and p.seq < q.seq)
          order by q.seq limit 1 ${lock}`.execute(tx);
        const next = rows[0];
        if (next === undefined) return undefined;
        const claim = { seq: Number(next.seq), tenantId: next.tenant_id, scanId: next.scan_id, owner };
        if (next.attempts >= MAX_SCAN_ATTEMPTS) {
          const problems = [{ message: `interrupted: the server stopped while applying it, ${next.attempts} times` }];
          await endScan(tx, claim, { status: 'failed', problems, at });
          return { ...claim, interrupted: true, name: null, options: {}, keyId: null };
        }
        await tx
          .updateTable('scan_queue')
          .set({ owner, claimed_until: new Date(now.getTime() + leaseMs).toISOString(), attempts: next.attempts + 1 })
          .where('seq', '=', claim.seq)
          .execute();
        const scan = await tx
          .updateTable('scans')
          .set({ status: 'running', started_at: at })
          .where('tenant_id', '=', claim.tenantId)
          .where('id', '=', claim.scanId)
          .returning(['name', 'options', 'key_id'])
          .executeTakeFirstOrThrow();
        return {
          ...claim,
          interrupted: false,
          name: scan.name,
          options: JSON.parse(scan.options) as Record<string, unknown>,
          keyId: scan.key_id,
        };
      }),

    /** The claimed scan's bytes, piece by piece. */
    scanBody: (claim: ClaimedScan): AsyncIterable<Buffer> => {
      if (place.kind === 'folder') return readSpooledBody(place.folder, claim.scanId);
      return (async function* () {
        for (let part = 0; ; part += 1) {
          const row = await db
            .selectFrom('scan_bodies')
            .select('bytes')
            .where('tenant_id', '=', claim.tenantId)
            .where('scan_id', '=', claim.scanId)
            .where('part', '=', part)
            .executeTakeFirst();
          if (row === undefined) return;
          yield Buffer.from(row.bytes);
        }
      })();
    },

    /** Ends a claimed scan `failed`, unless the claim was lost meanwhile (false: another process holds it). */
    failScan: (claim: ClaimedScan, problems: ScanProblem[], at: string): Promise<boolean> =>
      writeTransaction(db, dialect, async (tx) => {
        if (!(await holdsClaim(tx, dialect, claim))) return false;
        await endScan(tx, claim, { status: 'failed', problems, at });
        return true;
      }).then((ended) => {
        if (ended && place.kind === 'folder') removeSpooledBody(place.folder, claim.scanId);
        return ended;
      }),

    /**
     * Removes spooled bytes no scan will read: those of scans that ended, left by a process that died between the
     * commit and their removal, and files that name no scan, left by one that died while receiving or queueing them.
     * PostgreSQL's bodies go in the transaction that ends their scan. The scans are looked up by id alone (a scan of
     * the table): this runs when a runner starts, and then hourly.
     */
    sweepScanBodies: async (now: Date): Promise<number> => {
      if (place.kind === 'table') return 0;
      const files = await spooledFiles(place.folder);
      const status = new Map<string, string>();
      for (let start = 0; start < files.length; start += 500) {
        const ids = files.slice(start, start + 500).map((file) => file.scanId);
        const rows = await db.selectFrom('scans').select(['id', 'status']).where('id', 'in', ids).execute();
        for (const row of rows) status.set(row.id, row.status);
      }
      const left = files.filter((file) => {
        const of = status.get(file.scanId);
        if (of === undefined) return now.getTime() - file.modifiedMs > ORPHAN_MS;
        return of === 'succeeded' || of === 'failed';
      });
      for (const file of left) await file.remove();
      return left.length;
    },

    /** After a scan's write committed: its spooled bytes are no longer needed. */
    scanApplied: (claim: ClaimedScan): void => {
      if (place.kind === 'folder') removeSpooledBody(place.folder, claim.scanId);
    },
  };
}

/**
 * Whether the claim is still this process's, locking its entry on PostgreSQL until the transaction ends: another
 * process's claim skips a locked entry, so a scan whose write takes longer than its lease is never taken twice.
 */
export async function holdsClaim(tx: Kysely<Database>, dialect: Dialect, claim: ClaimedScan): Promise<boolean> {
  const lock = dialect === 'postgres' ? sql`for update` : sql``;
  const { rows } = await sql<{ seq: number }>`
    select seq from scan_queue where seq = ${claim.seq} and owner = ${claim.owner} ${lock}`.execute(tx);
  return rows.length > 0;
}

interface ScanEnd {
  status: 'succeeded' | 'failed';
  at: string;
  format?: string | null;
  summary?: unknown;
  gate?: unknown;
  problems?: ScanProblem[];
}

/** A scan's last state, its entry off the queue and its stored bytes gone, in the transaction given. */
export async function endScan(
  tx: Transaction<Database> | Kysely<Database>,
  claim: Pick<ClaimedScan, 'seq' | 'tenantId' | 'scanId'>,
  end: ScanEnd,
): Promise<void> {
  await tx
    .updateTable('scans')
    .set({
      status: end.status,
      finished_at: end.at,
      ...(end.format !== undefined ? { format: end.format } : {}),
      summary: end.summary === undefined ? null : JSON.stringify(end.summary),
      gate: end.gate === undefined ? null : JSON.stringify(end.gate),
      problems: JSON.stringify(end.problems ?? []),
    })
    .where('tenant_id', '=', claim.tenantId)
    .where('id', '=', claim.scanId)
    .execute();
  await tx.deleteFrom('scan_queue').where('seq', '=', claim.seq).execute();
  await tx
    .deleteFrom('scan_bodies')
    .where('tenant_id', '=', claim.tenantId)
    .where('scan_id', '=', claim.scanId)
    .execute();
}
