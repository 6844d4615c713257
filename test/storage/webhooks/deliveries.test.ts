// The webhooks' outbox on each database (pipeline.md §5, docs/DESIGN.md §104): an endpoint starts at its tenant's
// head; a claim is one process's; a batch is the changes after the endpoint's position that its filters pass, at most
// so many or so large, fixed once formed (a retry carries the same changes under the same id, whatever arrived since);
// delivered, the position moves past it; a lost claim moves nothing; a failure waits for its retry or disables; what
// the filters pass over moves the position without a batch; the secret is sealed at rest.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect } from '../../../src/storage/db/connect.js';
import type { WebhookAttempt } from '../../../src/domain/webhooks.js';
import type { ClaimedWebhook, Storage, WebhookBatch } from '../../../src/storage/index.js';
import { importRecords, openTestStorage, TENANT_A, TENANT_B, TEST_DIALECTS, type TestStorage } from '../../helpers.js';
import { assetRecord, findingRecord, tenantRecord, type ImportRecord } from '../../records.js';
import { createEndpoint } from '../../webhooks/receiver.js';

const LEASE = 60_000;
const limits = { maxChanges: 500, maxBytes: 1024 * 1024 };
const attempt = (batch: WebhookBatch, status: number | null, at = new Date()): WebhookAttempt => ({
  at: at.toISOString(),
  deliveryId: batch.deliveryId,
  kind: 'changes',
  changes: batch.items.length,
  status,
  durationMs: 3,
  error: status === null ? 'connection refused' : null,
});
const changesOf = (batch: WebhookBatch | string) => {
  if (typeof batch === 'string') throw new Error(`no batch: ${batch}`);
  return batch.items.map((item) => JSON.parse(item.toString()) as { seq: string; type: string; assetId: string });
};

let counter = 0;
/** A write of its own: `n` new assets, each with a HIGH and a LOW finding. */
async function write(storage: Storage, n: number, tenantId = TENANT_A): Promise<string[]> {
  const ids = Array.from({ length: n }, () => `sirn:hook-${(counter += 1)}`);
  const records: ImportRecord[] = [
    tenantRecord(tenantId),
    ...ids.flatMap((id) => [
      assetRecord(id, { tenantId }),
      findingRecord(id, `CVE-2026-${counter}1`, 'HIGH', { tenantId }),
      findingRecord(id, `CVE-2026-${counter}2`, 'LOW', { tenantId }),
    ]),
  ];
  const { problems } = await importRecords(storage, records);
  expect(problems).toEqual([]);
  return ids;
}

/** Says the batch was received (200). */
const delivered = (storage: Storage, claim: ClaimedWebhook, batch: WebhookBatch | string) => {
  if (typeof batch === 'string') throw new Error(`no batch: ${batch}`);
  return storage.webhookDelivered(claim, batch, attempt(batch, 200), new Date(), LEASE);
};

async function claimOne(storage: Storage, owner: string, id: string, now = new Date()): Promise<ClaimedWebhook> {
  const claims = await storage.claimWebhooks(owner, now, LEASE, 100);
  const claim = claims.find((c) => c.endpoint.id === id);
  if (claim === undefined) throw new Error(`${owner} did not claim ${id}`);
  return claim;
}

for (const dialect of TEST_DIALECTS) {
  describe(`webhook deliveries on ${dialect}`, () => {
    let opened: TestStorage;
    let storage: Storage;
    beforeAll(async () => {
      opened = await openTestStorage(dialect);
      storage = opened.storage;
      await write(storage, 1);
      await write(storage, 1, TENANT_B);
    });
    afterAll(() => opened.dispose());

    it('seals the secret: the row holds no secret, the server opens it, another endpoint cannot', async () => {
      const one = await createEndpoint(storage, TENANT_A, 'http://127.0.0.1:1/one');
      const two = await createEndpoint(storage, TENANT_A, 'http://127.0.0.1:1/two');
      expect(await storage.webhookSecret(one.id)).toBe(one.secret);
      const { db } = await connect(opened.url);
      try {
        const rows = await sql<{ id: string; secret: string }>`select id, secret from webhooks`.execute(db);
        const raw = JSON.stringify(rows.rows);
        expect(raw).not.toContain(one.secret.slice('whsec_'.length));
        expect(raw).not.toContain(two.secret.slice('whsec_'.length));
        // A sealed secret is bound to its endpoint: copied to another row, it does not open.
        const sealed = rows.rows.find((r) => r.id === one.id)!.secret;
        await sql`update webhooks set secret = ${sealed} where id = ${two.id}`.execute(db);
        await expect(storage.webhookSecret(two.id)).rejects.toThrow();
      } finally {
        await db.destroy();
      }
      expect(await storage.deleteWebhook(one.id)).toBe(true);
      expect(await storage.deleteWebhook(two.id)).toBe(true);
      expect(await storage.deleteWebhook(two.id)).toBe(false);
    });

    it('starts at the head; one of two processes claims it; a batch is fixed and retried as it was; delivered, it moves on', async () => {
      const { id } = await createEndpoint(storage, TENANT_A, 'http://127.0.0.1:1/a');
      const start = (await storage.getWebhook(id))!.position;
      expect(start).toBeGreaterThan(0);
      // Caught up: nothing to claim.
      expect((await storage.claimWebhooks('p1', new Date(), LEASE, 100)).map((c) => c.endpoint.id)).not.toContain(id);
      const [first] = await write(storage, 2);

      const [a, b] = await Promise.all([
        storage.claimWebhooks('p1', new Date(), LEASE, 100),
        storage.claimWebhooks('p2', new Date(), LEASE, 100),
      ]);
      const claims = [...a, ...b].filter((c) => c.endpoint.id === id);
      expect(claims).toHaveLength(1);
      const claim = claims[0]!;

      const batch = await storage.webhookBatch(claim, { ...limits, maxChanges: 3 }, new Date(), LEASE);
      const sent = changesOf(batch);
      expect(sent.map((c) => Number(c.seq))).toEqual([start + 1, start + 2, start + 3]);
      expect(sent[0]).toMatchObject({ type: 'asset.created', assetId: first });
      // More arrives; the batch being tried stays the same changes under the same id.
      await write(storage, 1);
      const again = await storage.webhookBatch(claim, { ...limits, maxChanges: 3 }, new Date(), LEASE);
      expect(typeof again !== 'string' && again.deliveryId).toBe(typeof batch !== 'string' && batch.deliveryId);
      expect(changesOf(again)).toEqual(sent);

      expect(await delivered(storage, claim, again)).toBe(true);
      const next = await storage.webhookBatch(claim, limits, new Date(), LEASE);
      const rest = changesOf(next);
      expect(Number(rest[0]!.seq)).toBe(start + 4);
      expect(rest.length).toBeGreaterThan(3);
      expect(await delivered(storage, claim, next)).toBe(true);
      expect(await storage.webhookBatch(claim, limits, new Date(), LEASE)).toBe('idle');
      const done = (await storage.getWebhook(id))!;
      expect(done.pending).toBeNull();
      expect(done.position).toBe(Number(rest.at(-1)!.seq));
      expect((await storage.webhookAttempts(id, 10)).map((x) => x.status)).toEqual([200, 200]);
      await storage.releaseWebhook(claim);
      await storage.deleteWebhook(id);
    });

    it('filters: a severity floor sends assets and HIGH findings; a filter that passes nothing moves the position alone', async () => {
      const high = await createEndpoint(storage, TENANT_A, 'http://127.0.0.1:1/high', { minSeverity: 'HIGH' });
      const none = await createEndpoint(storage, TENANT_A, 'http://127.0.0.1:1/none', { types: ['risk.dismissed'] });
      await write(storage, 2);
      const claims = await storage.claimWebhooks('p1', new Date(), LEASE, 100);
      const claim = claims.find((c) => c.endpoint.id === high.id)!;
      const skipper = claims.find((c) => c.endpoint.id === none.id)!;
      const sent = changesOf(await storage.webhookBatch(claim, limits, new Date(), LEASE));
      expect(sent.map((c) => c.type).sort()).toEqual([
        'asset.created',
        'asset.created',
        'finding.opened',
        'finding.opened',
      ]);
      const head = (await storage.getWebhook(none.id))!;
      expect(await storage.webhookBatch(skipper, limits, new Date(), LEASE)).toBe('idle');
      expect((await storage.getWebhook(none.id))!.position).toBeGreaterThan(head.position);
      expect(await storage.webhookAttempts(none.id, 10)).toEqual([]);
      await storage.deleteWebhook(high.id);
      await storage.deleteWebhook(none.id);
    });

    it('a body bound: as many changes as fit, at least one', async () => {
      const { id } = await createEndpoint(storage, TENANT_A, 'http://127.0.0.1:1/small');
      await write(storage, 1);
      const claim = await claimOne(storage, 'p1', id);
      const batch = await storage.webhookBatch(claim, { maxChanges: 500, maxBytes: 10 }, new Date(), LEASE);
      expect(changesOf(batch)).toHaveLength(1);
      await storage.deleteWebhook(id);
    });

    it('a failure waits for its retry, then the same batch; a lost claim moves nothing; disabled, it waits for enable', async () => {
      const { id } = await createEndpoint(storage, TENANT_A, 'http://127.0.0.1:1/fail');
      await write(storage, 1);
      const t0 = new Date();
      const claim = await claimOne(storage, 'p1', id, t0);
      const batch = (await storage.webhookBatch(claim, limits, t0, LEASE)) as WebhookBatch;
      const retryAt = new Date(t0.getTime() + 10_000);
      expect(
        await storage.webhookFailed(claim, batch, attempt(batch, null, t0), { retryAt: retryAt.toISOString() }),
      ).toBe(true);
      expect((await storage.getWebhook(id))!.pending).toEqual({
        through: batch.through,
        failures: 1,
        failingSince: t0.toISOString(),
        nextAttemptAt: retryAt.toISOString(),
      });
      expect((await storage.claimWebhooks('p2', t0, LEASE, 100)).map((c) => c.endpoint.id)).not.toContain(id);

      // Due: claimed by another process, which finds the same batch, with its failures.
      const later = new Date(retryAt.getTime() + 1);
      const claim2 = await claimOne(storage, 'p2', id, later);
      const retry = (await storage.webhookBatch(claim2, limits, later, LEASE)) as WebhookBatch;
      expect(retry).toMatchObject({ deliveryId: batch.deliveryId, failures: 1, failingSince: t0.toISOString() });
      expect(changesOf(retry)).toEqual(changesOf(batch));

      // Its lease runs out and a third takes it: the second's answer moves nothing.
      const expired = new Date(later.getTime() + LEASE + 1);
      const claim3 = await claimOne(storage, 'p3', id, expired);
      expect(await storage.webhookDelivered(claim2, retry, attempt(retry, 200), expired, LEASE)).toBe(false);
      expect((await storage.getWebhook(id))!.position).toBe(batch.from);

      // The third gives up on it: disabled, with the reason; nothing claims it until it is enabled.
      expect(await storage.webhookFailed(claim3, retry, attempt(retry, 500, expired), { disable: 'gave up' })).toBe(
        true,
      );
      const disabled = (await storage.getWebhook(id))!;
      expect(disabled).toMatchObject({ enabled: false, disabledReason: 'gave up' });
      const farLater = new Date(expired.getTime() + LEASE * 10);
      expect((await storage.claimWebhooks('p4', farLater, LEASE, 100)).map((c) => c.endpoint.id)).not.toContain(id);
      expect(await storage.setWebhookEnabled(id, true, farLater.toISOString(), null)).toBe(true);
      const claim4 = await claimOne(storage, 'p4', id, farLater);
      const resent = (await storage.webhookBatch(claim4, limits, farLater, LEASE)) as WebhookBatch;
      expect(resent).toMatchObject({ deliveryId: batch.deliveryId, failures: 0 });
      expect((await storage.webhookAttempts(id, 10)).map((x) => x.status)).toEqual([500, 200, null]);
      await storage.deleteWebhook(id);
    });

    it('keeps the last 100 attempts of an endpoint', async () => {
      const { id } = await createEndpoint(storage, TENANT_B, 'http://127.0.0.1:1/pings');
      for (let i = 0; i < 105; i += 1)
        await storage.recordWebhookAttempt(
          { id, tenantId: TENANT_B },
          {
            at: new Date(i * 1000).toISOString(),
            deliveryId: `msg_ping_${i}`,
            kind: 'ping',
            changes: 0,
            status: 200,
            durationMs: 1,
            error: null,
          },
        );
      const kept = await storage.webhookAttempts(id, 1000);
      expect(kept).toHaveLength(100);
      expect(kept[0]!.deliveryId).toBe('msg_ping_104');
      expect(kept.at(-1)!.deliveryId).toBe('msg_ping_5');
      await storage.deleteWebhook(id);
    });
  });
}
