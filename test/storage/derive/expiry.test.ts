// Dismissals and exemptions that expire, on each database (src/storage/derive/expiry.ts): the writes that set or clear
// one keep the tenant's earliest expiry; the runner reopens what is due, lifts the exemptions that ended (their findings
// count again), appends those changes with cause `expiry`, and does each once, also beside a runner of another process.
import { spawn } from 'node:child_process';
import { sql, type Kysely } from 'kysely';
import { describe, expect, it } from 'vitest';
import type { Database } from '../../../src/storage/db/tables.js';
import type { ExpiryRun, Storage } from '../../../src/storage/index.js';
import { TENANT_LOCK_CLASS } from '../../../src/storage/tx/turns.js';
import { importRecords, TENANT_A, TENANT_B, TEST_DIALECTS, withTestDatabase } from '../../helpers.js';
import { assetRecord, exemptionRecord, findingRecord, riskRecord, tenantRecord } from '../../records.js';

interface Change {
  type: string;
  riskId: string | null;
  vulnerabilityId: string | null;
  cause: { kind: string };
  fields: { name: string; before: unknown; after: unknown }[];
}

const ASSET = 'sirn:expiry-1';
const HOUR = 60 * 60 * 1000;

async function changesOf(storage: Storage, tenantId = TENANT_A): Promise<Change[]> {
  const page = await storage.listChanges({ tenantId, dataVersion: 0 }, { perPage: 1000 }, undefined);
  return page.items.map((item) => JSON.parse(item.toString()) as Change);
}
const expiryChanges = async (storage: Storage) => (await changesOf(storage)).filter((c) => c.cause.kind === 'expiry');

const nextExpiry = async (db: Kysely<Database>, tenantId = TENANT_A) =>
  (await db.selectFrom('tenants').select('next_expiry_at').where('tenant_id', '=', tenantId).executeTakeFirstOrThrow())
    .next_expiry_at;
const riskState = async (db: Kysely<Database>, id: string) =>
  db
    .selectFrom('risk_states')
    .select(['lifecycle_state', 'until'])
    .where('tenant_id', '=', TENANT_A)
    .where('risk_id', '=', id)
    .executeTakeFirst();
const lifecycle = async (db: Kysely<Database>, id: string) =>
  (
    await db
      .selectFrom('risks')
      .select('lifecycle_state')
      .where('tenant_id', '=', TENANT_A)
      .where('id', '=', id)
      .executeTakeFirstOrThrow()
  ).lifecycle_state;
const dataVersion = async (db: Kysely<Database>) =>
  Number(
    (await db.selectFrom('tenants').select('data_version').where('tenant_id', '=', TENANT_A).executeTakeFirstOrThrow())
      .data_version,
  );

/** Storage.expireDue in a process of its own: what it has printed so far, and what its run did. */
function runner(url: string, now: string): { output: () => string; done: Promise<ExpiryRun> } {
  const script = new URL('./expire-process.ts', import.meta.url).pathname;
  const child = spawn(process.execPath, ['--import', 'tsx', script, url, now], { stdio: ['ignore', 'pipe', 'pipe'] });
  let [stdout, stderr] = ['', ''];
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const done = new Promise<ExpiryRun>((resolve, reject) =>
    child.on('close', (code) => {
      const last = stdout.trim().split('\n').pop() ?? '';
      if (code === 0) resolve(JSON.parse(last) as ExpiryRun);
      else reject(new Error(`the runner exited ${code}: ${stderr}`));
    }),
  );
  return { output: () => stdout, done };
}

async function imported(storage: Storage, records: Parameters<typeof importRecords>[1]): Promise<void> {
  expect((await importRecords(storage, records)).problems).toEqual([]);
}

for (const dialect of TEST_DIALECTS) {
  describe(`expiries on ${dialect}`, () => {
    it('a dismissal until a time: kept as the earliest expiry, reopened by the runner at it, once', () =>
      withTestDatabase(dialect, async ({ storage }, db) => {
        await imported(storage, [
          tenantRecord(),
          tenantRecord(TENANT_B),
          assetRecord(ASSET),
          riskRecord('risk-1', { primaryAssetId: ASSET }),
          riskRecord('risk-2', { primaryAssetId: ASSET }),
        ]);
        const until = '2030-01-01T00:00:00.000Z';
        const later = '2031-01-01T00:00:00.000Z';
        const at = '2029-06-01T00:00:00.000Z';
        expect(await storage.setRiskLifecycle(TENANT_A, 'risk-1', 'DISMISSED_ACCEPTED', at, undefined, until)).toBe(
          true,
        );
        expect(await storage.setRiskLifecycle(TENANT_A, 'risk-2', 'DISMISSED_ACCEPTED', at, undefined, later)).toBe(
          true,
        );
        expect(await riskState(db, 'risk-1')).toEqual({ lifecycle_state: 'DISMISSED_ACCEPTED', until });
        expect(await nextExpiry(db)).toBe(until);
        expect(await nextExpiry(db, TENANT_B)).toBeNull();

        // Before it: nothing is due.
        expect(await storage.expireDue(new Date(Date.parse(until) - 1))).toEqual({
          tenants: 0,
          reopened: 0,
          assets: 0,
        });
        expect(await lifecycle(db, 'risk-1')).toBe('DISMISSED_ACCEPTED');
        const version = await dataVersion(db);

        // At it: risk-1 reopens (its state forgets the end), risk-2 stays dismissed and is the next expiry.
        expect(await storage.expireDue(new Date(until))).toEqual({ tenants: 1, reopened: 1, assets: 0 });
        expect(await lifecycle(db, 'risk-1')).toBe('OPEN');
        expect(await riskState(db, 'risk-1')).toEqual({ lifecycle_state: 'OPEN', until: null });
        expect(await lifecycle(db, 'risk-2')).toBe('DISMISSED_ACCEPTED');
        expect(await nextExpiry(db)).toBe(later);
        expect(await dataVersion(db)).toBeGreaterThan(version);
        const reopened = (await expiryChanges(storage)).filter((c) => c.type === 'risk.reopened');
        expect(reopened.map((c) => c.riskId)).toEqual(['risk-1']);

        // Again at the same time: done already.
        expect(await storage.expireDue(new Date(until))).toEqual({ tenants: 0, reopened: 0, assets: 0 });
        expect((await expiryChanges(storage)).length).toBe(1);
      }));

    it('a dismissal without --until, and a reopen, clear the end and the earliest expiry', () =>
      withTestDatabase(dialect, async ({ storage }, db) => {
        await imported(storage, [tenantRecord(), assetRecord(ASSET), riskRecord('risk-1', { primaryAssetId: ASSET })]);
        const at = '2029-06-01T00:00:00.000Z';
        const until = '2030-01-01T00:00:00.000Z';
        await storage.setRiskLifecycle(TENANT_A, 'risk-1', 'DISMISSED_ACCEPTED', at, undefined, until);
        expect(await nextExpiry(db)).toBe(until);
        await storage.setRiskLifecycle(TENANT_A, 'risk-1', 'DISMISSED_NOT_A_RISK', at);
        expect(await riskState(db, 'risk-1')).toEqual({ lifecycle_state: 'DISMISSED_NOT_A_RISK', until: null });
        expect(await nextExpiry(db)).toBeNull();
        await storage.setRiskLifecycle(TENANT_A, 'risk-1', 'DISMISSED_ACCEPTED', at, undefined, until);
        // A reopen clears it, whatever `until` says.
        await storage.setRiskLifecycle(TENANT_A, 'risk-1', 'OPEN', at, undefined, until);
        expect(await riskState(db, 'risk-1')).toEqual({ lifecycle_state: 'OPEN', until: null });
        expect(await nextExpiry(db)).toBeNull();
        expect(await storage.expireDue(new Date(Date.parse(until) + HOUR))).toEqual({
          tenants: 0,
          reopened: 0,
          assets: 0,
        });
      }));

    it('an exemption until a time exempts until then; the runner lifts it: its findings count again', () =>
      withTestDatabase(dialect, async ({ storage }, db) => {
        const expiresAt = new Date(Date.now() + HOUR).toISOString();
        const past = new Date(Date.now() - HOUR).toISOString();
        await imported(storage, [
          tenantRecord(),
          assetRecord(ASSET),
          findingRecord(ASSET, 'CVE-2030-0001', 'CRITICAL'),
          findingRecord(ASSET, 'CVE-2030-0002', 'HIGH'),
          exemptionRecord('e0000000-0000-4000-8000-000000000001', [{ vulnerabilityId: 'CVE-2030-0001' }], {
            expiresAt,
          }),
          // Expired when imported: it never matches, and nothing waits for it.
          exemptionRecord('e0000000-0000-4000-8000-000000000002', [{ vulnerabilityId: 'CVE-2030-0002' }], {
            expiresAt: past,
          }),
        ]);
        const exempted = async () =>
          (
            await db
              .selectFrom('vulnerabilities')
              .select(['vulnerability_id', 'is_exempted'])
              .where('tenant_id', '=', TENANT_A)
              .orderBy('vulnerability_id')
              .execute()
          ).map((r) => [r.vulnerability_id, r.is_exempted]);
        const critical = async () =>
          (await db.selectFrom('assets').select('n_critical').where('id', '=', ASSET).executeTakeFirstOrThrow())
            .n_critical;
        expect(await exempted()).toEqual([
          ['CVE-2030-0001', 1],
          ['CVE-2030-0002', 0],
        ]);
        expect(await critical()).toBe(0);
        const stored = await db
          .selectFrom('exemptions')
          .select(['exemption_id', 'expires_at'])
          .orderBy('exemption_id')
          .execute();
        expect(stored.map((e) => e.expires_at)).toEqual([expiresAt, past]);
        expect(await nextExpiry(db)).toBe(expiresAt);

        expect(await storage.expireDue(new Date(Date.parse(expiresAt) - 1))).toMatchObject({ tenants: 0 });
        expect(await storage.expireDue(new Date(expiresAt))).toEqual({ tenants: 1, reopened: 0, assets: 1 });
        expect(await exempted()).toEqual([
          ['CVE-2030-0001', 0],
          ['CVE-2030-0002', 0],
        ]);
        expect(await critical()).toBe(1);
        expect(await nextExpiry(db)).toBeNull();
        const updated = (await expiryChanges(storage)).filter((c) => c.type === 'finding.updated');
        expect(updated.map((c) => [c.vulnerabilityId, c.fields.find((f) => f.name === 'isExempted')])).toEqual([
          ['CVE-2030-0001', { name: 'isExempted', before: true, after: false }],
        ]);
        expect(await storage.expireDue(new Date(Date.parse(expiresAt) + HOUR))).toMatchObject({ tenants: 0 });
      }));

    // SQLite waits for a lock on the thread that asks: each runner is a process of its own, as on two servers (each
    // compiles the sources it runs at its start, some seconds on a busy machine).
    it(
      'two runners of one database at once, held by another write: each expiry is done once',
      () =>
        withTestDatabase(dialect, async ({ storage, url }, db) => {
          await imported(storage, [
            tenantRecord(),
            assetRecord(ASSET),
            riskRecord('risk-1', { primaryAssetId: ASSET }),
          ]);
          const until = '2030-01-01T00:00:00.000Z';
          await storage.setRiskLifecycle(
            TENANT_A,
            'risk-1',
            'DISMISSED_ACCEPTED',
            '2029-01-01T00:00:00.000Z',
            undefined,
            until,
          );
          const now = new Date(Date.parse(until) + 1000).toISOString();
          // Another write holds the tenant (PostgreSQL: its turn; SQLite: the write lock) until both runners wait for it.
          let release!: () => void;
          const released = new Promise<void>((resolve) => (release = resolve));
          let holding!: () => void;
          const held = new Promise<void>((resolve) => (holding = resolve));
          const holder = db.transaction().execute(async (tx) => {
            await (
              dialect === 'postgres'
                ? sql`select pg_advisory_xact_lock(${TENANT_LOCK_CLASS}::int, hashtext(${TENANT_A}))`
                : sql`update tenants set name = name where tenant_id = ${TENANT_A}`
            ).execute(tx);
            holding();
            await released;
          });
          await held;
          const runners = [runner(url, now), runner(url, now)];
          try {
            for (let tries = 0; runners.some((r) => !r.output().includes('waiting')); tries += 1) {
              if (tries > 1200)
                throw new Error(`the runners did not wait: ${runners.map((r) => r.output()).join(' | ')}`);
              await new Promise((resolve) => setTimeout(resolve, 50));
            }
          } finally {
            release();
            await holder;
          }
          const runs = await Promise.all(runners.map((r) => r.done));
          expect(runs.map((r) => r.reopened).sort()).toEqual([0, 1]);
          expect(await lifecycle(db, 'risk-1')).toBe('OPEN');
          const reopened = (await changesOf(storage)).filter((c) => c.type === 'risk.reopened');
          expect(reopened).toHaveLength(1);
          expect(reopened[0]!.cause).toEqual({ kind: 'expiry' });
        }),
      120_000,
    );
  });
}
