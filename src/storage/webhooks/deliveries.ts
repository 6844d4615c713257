// Delivering an endpoint's changes (pipeline.md §5, docs/DESIGN.md §104). The change log is the outbox: a write's
// changes commit or roll back with it, and each endpoint keeps the position in its tenant's log through which its
// changes were delivered. A server process claims an endpoint for a lease (a compare-and-set on its row, so that one
// process sends each batch), forms its next batch from the changes after that position that pass its filters, fixes
// the batch's last position in the row before sending it (a retry sends the same changes under the same id, whatever
// arrived since), and moves the position past it once the receiver took it. The statements on `changes` name the
// tenant; those on `webhooks` name the endpoint.
import { sql as raw, type Kysely } from 'kysely';
import { chunks } from '../../lib/collections.js';
import type { ChangeType } from '../../domain/changes.js';
import { deliveryId, passesFilters, type ChangeFacts, type WebhookFilters } from '../../domain/webhooks.js';
import { changeItems, changeRows } from '../changes/read.js';
import { findingOf, riskOf } from '../changes/states.js';
import { sqlDialects } from '../db/dialect.js';
import type { Database } from '../db/tables.js';
import { writeTransaction } from '../tx/write.js';
import type { ClaimedWebhook, Dialect, Storage, WebhookBatch } from '../types.js';
import { endpointOf, insertAttempt } from './endpoints.js';
import { openSecret, webhookKey } from './secrets.js';

/** Changes read per statement while looking for those an endpoint's filters pass. */
const SCAN_ROWS = 1000;
/** Changes looked at for one batch at most; a longer run that the filters pass over is skipped in steps of this. */
const SCAN_LIMIT = 20_000;

interface LightRow {
  seq: number;
  type: string;
  before: string | null;
  after: string | null;
}

/** What the filters read of a change: the state after it, or before it for one that removed its record. */
function factsOf(row: LightRow): ChangeFacts {
  const type = row.type as ChangeType;
  const state = row.after ?? row.before;
  if (state === null) return { type };
  if (type.startsWith('finding.')) {
    const finding = findingOf(state);
    return { type, severity: finding.severityLevel, hasKev: finding.hasKev, hasExploit: finding.hasExploit };
  }
  if (type.startsWith('risk.')) return { type, severity: riskOf(state).severityLevel as ChangeFacts['severity'] };
  return { type };
}

type DeliveryStore = Pick<
  Storage,
  'claimWebhooks' | 'webhookBatch' | 'webhookDelivered' | 'webhookFailed' | 'releaseWebhook'
>;

export function webhookDeliveries(db: Kysely<Database>, dialect: Dialect): DeliveryStore {
  const key = webhookKey(db);
  const sql = sqlDialects[dialect];
  const leaseUntil = (now: Date, leaseMs: number) => new Date(now.getTime() + leaseMs).toISOString();

  /** The changes of the tenant after `after` (through `through`), `limit` at most, as the filters read them. */
  const lightRows = async (tenantId: string, after: number, through: number | null, limit: number) => {
    let query = db
      .selectFrom('changes')
      .select(['seq', 'type', 'before', 'after'])
      .where('tenant_id', '=', tenantId)
      .where('seq', '>', after);
    if (through !== null) query = query.where('seq', '<=', through);
    const rows = await query.orderBy('seq').limit(limit).execute();
    return rows.map((r) => ({ ...r, seq: Number(r.seq) }));
  };

  /** Each change's API JSON, for the positions given (in order). */
  const items = async (tenantId: string, seqs: readonly number[]): Promise<Buffer[]> => {
    const out: Buffer[] = [];
    for (const some of chunks(seqs)) {
      const rows = await changeRows(db, sql, tenantId, raw`c.seq in (${raw.join(some)})`);
      out.push(...(await changeItems(db, tenantId, rows)));
    }
    return out;
  };

  /**
   * The positions after `from` that the filters pass, through a batch's last or up to `max`, and where the looking
   * stopped: at the last of them when `max` were found, else at the last change looked at (the end of the log or of
   * the batch, or SCAN_LIMIT further on).
   */
  const matching = async (
    tenantId: string,
    filters: WebhookFilters,
    from: number,
    bound: { through: number } | { max: number },
  ) => {
    const through = 'through' in bound ? bound.through : null;
    const max = 'max' in bound ? bound.max : Number.MAX_SAFE_INTEGER;
    const seqs: number[] = [];
    let cursor = from;
    let scanned = 0;
    for (;;) {
      const rows = await lightRows(tenantId, cursor, through, SCAN_ROWS);
      for (const row of rows) {
        cursor = row.seq;
        if (passesFilters(filters, factsOf(row))) seqs.push(row.seq);
        if (seqs.length === max) return { seqs, cursor, end: false };
      }
      scanned += rows.length;
      if (rows.length < SCAN_ROWS) return { seqs, cursor, end: true };
      if (through === null && scanned >= SCAN_LIMIT) return { seqs, cursor, end: false };
    }
  };

  /** Sets the claimed endpoint's row as `set` says, if the claim is still this process's; false when it is not. */
  const whileClaimed = async (
    claim: ClaimedWebhook,
    set: Partial<Database['webhooks']>,
    extra?: { batchThrough: number | null },
  ): Promise<boolean> => {
    // In a write transaction, which on SQLite waits for another process's write rather than failing when busy.
    const result = await writeTransaction(db, dialect, (tx) => {
      let update = tx
        .updateTable('webhooks')
        .set(set)
        .where('id', '=', claim.endpoint.id)
        .where('owner', '=', claim.owner);
      if (extra !== undefined)
        update =
          extra.batchThrough === null
            ? update.where('batch_through', 'is', null)
            : update.where('batch_through', '=', extra.batchThrough);
      return update.executeTakeFirst();
    });
    return Number(result.numUpdatedRows) > 0;
  };

  return {
    claimWebhooks: async (owner, now, leaseMs, limit) => {
      if (limit <= 0) return [];
      const at = now.toISOString();
      const candidates = await db
        .selectFrom('webhooks')
        .select(['id', 'tenant_id', 'delivered_seq', 'batch_through', 'claimed_until'])
        .where('enabled', '=', 1)
        .where((eb) => eb.or([eb('claimed_until', 'is', null), eb('claimed_until', '<', at)]))
        .where((eb) => eb.or([eb('next_attempt_at', 'is', null), eb('next_attempt_at', '<=', at)]))
        .execute();
      if (candidates.length === 0) return [];
      // Which tenants' logs went past their endpoints' positions: a second statement rather than a join, since on
      // Citus `webhooks` stays on the coordinator beside the reference table `tenants` (docs/SCALING.md).
      const heads = new Map<string, number>();
      const tenantIds = [...new Set(candidates.map((c) => c.tenant_id))];
      for (const some of chunks(tenantIds))
        for (const t of await db
          .selectFrom('tenants')
          .select(['tenant_id', 'change_seq'])
          .where('tenant_id', 'in', some)
          .execute())
          heads.set(t.tenant_id, Number(t.change_seq));
      // The least recently claimed first, so that no endpoint waits behind others that always have work.
      const due = candidates
        .filter((c) => c.batch_through !== null || (heads.get(c.tenant_id) ?? 0) > Number(c.delivered_seq))
        .sort((a, b) => (a.claimed_until ?? '').localeCompare(b.claimed_until ?? '') || a.id.localeCompare(b.id))
        .slice(0, limit);
      if (due.length === 0) return [];
      const rows = await writeTransaction(db, dialect, async (tx) => {
        const claimed = [];
        for (const candidate of due) {
          // The claim is a compare-and-set: of two processes that read the endpoint free, one updates it and the
          // other's update finds it claimed (PostgreSQL re-reads the row it waited for, SQLite writes one at a time).
          const row = await tx
            .updateTable('webhooks')
            .set({ owner, claimed_until: leaseUntil(now, leaseMs) })
            .where('id', '=', candidate.id)
            .where('enabled', '=', 1)
            .where((eb) => eb.or([eb('claimed_until', 'is', null), eb('claimed_until', '<', at)]))
            .returningAll()
            .executeTakeFirst();
          if (row !== undefined) claimed.push(row);
        }
        return claimed;
      });
      const sealing = await key();
      return rows.map((row) => ({
        endpoint: endpointOf(row),
        secret: openSecret(sealing, row.id, row.secret),
        owner,
      }));
    },

    webhookBatch: async (claim, limits, now, leaseMs) => {
      for (;;) {
        const row = await db.selectFrom('webhooks').selectAll().where('id', '=', claim.endpoint.id).executeTakeFirst();
        if (row === undefined || row.owner !== claim.owner) return 'lost';
        if (row.enabled !== 1) {
          await whileClaimed(claim, { owner: null, claimed_until: null });
          return 'idle';
        }
        const { filters } = endpointOf(row);
        const from = Number(row.delivered_seq);
        const lease = { claimed_until: leaseUntil(now, leaseMs) };
        if (row.batch_through !== null) {
          // The batch being tried: the same changes again, whatever arrived since.
          const through = Number(row.batch_through);
          const { seqs } = await matching(row.tenant_id, filters, from, { through });
          if (seqs.length === 0) {
            // Its changes were deleted by retention since (an endpoint disabled for longer than the log keeps).
            const moved = { ...lease, delivered_seq: through, batch_through: null, failures: 0, failing_since: null };
            if (!(await whileClaimed(claim, moved, { batchThrough: through }))) return 'lost';
            continue;
          }
          if (!(await whileClaimed(claim, lease))) return 'lost';
          return {
            deliveryId: deliveryId(row.id, from, through),
            from,
            through,
            items: await items(row.tenant_id, seqs),
            failures: row.failures,
            failingSince: row.failing_since,
          } satisfies WebhookBatch;
        }
        // The head first: every change up to it committed before it was read, so once the rows after the position
        // are all read the position may move to it (past changes retention deleted, which no read finds).
        const head = await db
          .selectFrom('tenants')
          .select('change_seq')
          .where('tenant_id', '=', row.tenant_id)
          .executeTakeFirst();
        const found = await matching(row.tenant_id, filters, from, { max: limits.maxChanges });
        if (found.end) found.cursor = Math.max(found.cursor, Number(head?.change_seq ?? 0));
        if (found.seqs.length === 0) {
          // Nothing the filters pass: the position moves past what was looked at, with nothing sent.
          if (
            found.cursor > from &&
            !(await whileClaimed(claim, { ...lease, delivered_seq: found.cursor }, { batchThrough: null }))
          )
            return 'lost';
          if (found.end) return 'idle';
          continue;
        }
        const built = await items(row.tenant_id, found.seqs);
        // As many as fit the body's bound, one at least (a change larger than the bound goes alone).
        let count = 0;
        let bytes = 0;
        for (const item of built) {
          bytes += item.length + (count > 0 ? 1 : 0);
          if (count > 0 && bytes > limits.maxBytes) break;
          count += 1;
        }
        const through = count < found.seqs.length ? found.seqs[count - 1]! : found.cursor;
        if (!(await whileClaimed(claim, { ...lease, batch_through: through }, { batchThrough: null }))) return 'lost';
        return {
          deliveryId: deliveryId(row.id, from, through),
          from,
          through,
          items: built.slice(0, count),
          failures: 0,
          failingSince: null,
        } satisfies WebhookBatch;
      }
    },

    webhookDelivered: (claim, batch, attempt, now, leaseMs) =>
      writeTransaction(db, dialect, async (tx) => {
        await insertAttempt(tx, claim.endpoint, attempt);
        const result = await tx
          .updateTable('webhooks')
          .set({
            delivered_seq: batch.through,
            batch_through: null,
            failures: 0,
            failing_since: null,
            next_attempt_at: null,
            claimed_until: leaseUntil(now, leaseMs),
          })
          .where('id', '=', claim.endpoint.id)
          .where('owner', '=', claim.owner)
          .where('batch_through', '=', batch.through)
          .executeTakeFirst();
        return Number(result.numUpdatedRows) > 0;
      }),

    webhookFailed: (claim, batch, attempt, outcome) =>
      writeTransaction(db, dialect, async (tx) => {
        await insertAttempt(tx, claim.endpoint, attempt);
        const result = await tx
          .updateTable('webhooks')
          .set({
            failures: batch.failures + 1,
            failing_since: batch.failingSince ?? attempt.at,
            owner: null,
            claimed_until: null,
            ...('disable' in outcome
              ? { enabled: 0, disabled_at: attempt.at, disabled_reason: outcome.disable, next_attempt_at: null }
              : { next_attempt_at: outcome.retryAt }),
          })
          .where('id', '=', claim.endpoint.id)
          .where('owner', '=', claim.owner)
          .executeTakeFirst();
        return Number(result.numUpdatedRows) > 0;
      }),

    releaseWebhook: async (claim) => {
      await whileClaimed(claim, { owner: null, claimed_until: null });
    },
  };
}
