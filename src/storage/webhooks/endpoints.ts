// Webhook endpoints (pipeline.md §5, docs/DESIGN.md §104): created, listed, disabled and enabled, deleted by the
// commands, and their recent attempts. An endpoint starts at its tenant's head: it is sent the changes after its
// creation. `webhooks` is global (the dispatcher's claims look across tenants); its attempts are its tenant's rows.
import type { Kysely, Selectable, Transaction } from 'kysely';
import type { ChangeType } from '../../domain/changes.js';
import type { FindingSeverity } from '../../domain/enums.js';
import type { NewWebhook, WebhookAttempt, WebhookEndpoint } from '../../domain/webhooks.js';
import type { Database, WebhookTable } from '../db/tables.js';
import { writeTransaction } from '../tx/write.js';
import type { Dialect, Storage } from '../types.js';
import { openSecret, sealSecret, webhookKey } from './secrets.js';

export type WebhookRow = Selectable<WebhookTable>;

/** The attempts kept per endpoint: `webhooks deliveries` shows the recent ones. */
export const KEPT_ATTEMPTS = 100;

export function endpointOf(row: WebhookRow): WebhookEndpoint {
  const through = row.batch_through === null ? null : Number(row.batch_through);
  return {
    id: row.id,
    tenantId: row.tenant_id,
    url: row.url,
    description: row.description,
    filters: {
      types: row.types === null ? null : (row.types.split(',') as ChangeType[]),
      minSeverity: row.min_severity as FindingSeverity | null,
      kev: row.kev === 1,
      exploit: row.exploit === 1,
    },
    createdAt: row.created_at,
    enabled: row.enabled === 1,
    disabledAt: row.disabled_at,
    disabledReason: row.disabled_reason,
    position: Number(row.delivered_seq),
    pending:
      through === null
        ? null
        : {
            through,
            failures: row.failures,
            failingSince: row.failing_since,
            nextAttemptAt: row.next_attempt_at,
          },
  };
}

/** Writes an attempt as the endpoint's next and forgets those older than the last KEPT_ATTEMPTS. */
export async function insertAttempt(
  tx: Transaction<Database>,
  endpoint: { id: string; tenantId: string },
  attempt: WebhookAttempt,
): Promise<void> {
  const numbered = await tx
    .updateTable('webhooks')
    .set((eb) => ({ attempt_seq: eb('attempt_seq', '+', 1) }))
    .where('id', '=', endpoint.id)
    .returning('attempt_seq')
    .executeTakeFirst();
  // Deleted meanwhile (`webhooks delete` while a batch was on its way): nothing to record it under.
  if (numbered === undefined) return;
  const seq = Number(numbered.attempt_seq);
  await tx
    .insertInto('webhook_attempts')
    .values({
      tenant_id: endpoint.tenantId,
      webhook_id: endpoint.id,
      seq,
      at: attempt.at,
      delivery_id: attempt.deliveryId,
      kind: attempt.kind,
      changes: attempt.changes,
      status: attempt.status,
      duration_ms: Math.round(attempt.durationMs),
      error: attempt.error,
    })
    .execute();
  await tx
    .deleteFrom('webhook_attempts')
    .where('tenant_id', '=', endpoint.tenantId)
    .where('webhook_id', '=', endpoint.id)
    .where('seq', '<=', seq - KEPT_ATTEMPTS)
    .execute();
}

type EndpointStore = Pick<
  Storage,
  | 'createWebhook'
  | 'listWebhooks'
  | 'getWebhook'
  | 'webhookSecret'
  | 'setWebhookEnabled'
  | 'deleteWebhook'
  | 'webhookAttempts'
  | 'recordWebhookAttempt'
>;

export function webhookEndpoints(db: Kysely<Database>, dialect: Dialect): EndpointStore {
  const key = webhookKey(db);
  const find = (id: string) => db.selectFrom('webhooks').selectAll().where('id', '=', id).executeTakeFirst();
  return {
    createWebhook: async (hook: NewWebhook, onWait) => {
      const sealed = sealSecret(await key(), hook.id, hook.secret);
      return writeTransaction(
        db,
        dialect,
        async (tx) => {
          const tenant = await tx
            .selectFrom('tenants')
            .select('change_seq')
            .where('tenant_id', '=', hook.tenantId)
            .executeTakeFirst();
          if (tenant === undefined) throw new Error(`no tenant ${hook.tenantId}`);
          const row = await tx
            .insertInto('webhooks')
            .values({
              id: hook.id,
              tenant_id: hook.tenantId,
              url: hook.url,
              description: hook.description,
              types: hook.filters.types === null ? null : hook.filters.types.join(','),
              min_severity: hook.filters.minSeverity,
              kev: hook.filters.kev ? 1 : 0,
              exploit: hook.filters.exploit ? 1 : 0,
              secret: sealed,
              created_at: hook.createdAt,
              enabled: 1,
              disabled_at: null,
              disabled_reason: null,
              delivered_seq: Number(tenant.change_seq),
              batch_through: null,
              failures: 0,
              failing_since: null,
              next_attempt_at: null,
              owner: null,
              claimed_until: null,
              attempt_seq: 0,
            })
            .returningAll()
            .executeTakeFirstOrThrow();
          return endpointOf(row);
        },
        onWait,
      );
    },

    listWebhooks: async (tenantId) => {
      let query = db.selectFrom('webhooks').selectAll();
      if (tenantId !== undefined) query = query.where('tenant_id', '=', tenantId);
      const rows = await query.orderBy('tenant_id').orderBy('created_at').orderBy('id').execute();
      return rows.map(endpointOf);
    },

    getWebhook: async (id) => {
      const row = await find(id);
      return row && endpointOf(row);
    },

    webhookSecret: async (id) => {
      const row = await find(id);
      return row && openSecret(await key(), row.id, row.secret);
    },

    setWebhookEnabled: (id, enabled, at, reason, onWait) =>
      writeTransaction(
        db,
        dialect,
        async (tx) => {
          // Enabling starts the batch being tried afresh: its next attempt now, its window from its next failure.
          const result = await tx
            .updateTable('webhooks')
            .set(
              enabled
                ? {
                    enabled: 1,
                    disabled_at: null,
                    disabled_reason: null,
                    failures: 0,
                    failing_since: null,
                    next_attempt_at: null,
                  }
                : { enabled: 0, disabled_at: at, disabled_reason: reason },
            )
            .where('id', '=', id)
            .executeTakeFirst();
          return Number(result.numUpdatedRows) > 0;
        },
        onWait,
      ),

    deleteWebhook: (id, onWait) =>
      writeTransaction(
        db,
        dialect,
        async (tx) => {
          const row = await tx.deleteFrom('webhooks').where('id', '=', id).returning('tenant_id').executeTakeFirst();
          if (row === undefined) return false;
          await tx
            .deleteFrom('webhook_attempts')
            .where('tenant_id', '=', row.tenant_id)
            .where('webhook_id', '=', id)
            .execute();
          return true;
        },
        onWait,
      ),

    webhookAttempts: async (id, limit) => {
      const row = await find(id);
      if (row === undefined) return [];
      const rows = await db
        .selectFrom('webhook_attempts')
        .selectAll()
        .where('tenant_id', '=', row.tenant_id)
        .where('webhook_id', '=', id)
        .orderBy('seq', 'desc')
        .limit(limit)
        .execute();
      return rows.map((r) => ({
        at: r.at,
        deliveryId: r.delivery_id,
        kind: r.kind as WebhookAttempt['kind'],
        changes: r.changes,
        status: r.status,
        durationMs: r.duration_ms,
        error: r.error,
      }));
    },

    recordWebhookAttempt: (endpoint, attempt, onWait) =>
      writeTransaction(db, dialect, (tx) => insertAttempt(tx, endpoint, attempt), onWait),
  };
}
