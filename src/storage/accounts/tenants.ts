// Tenants: the global table every tenant record hangs from. Creating one is a CLI operation; the counts of a listing
// are read per table with one grouped query each.
import type { Kysely } from 'kysely';
import { slaOf, type Sla } from '../../domain/remediation.js';
import { writeTransaction } from '../tx/write.js';
import type { Database } from '../db/tables.js';
import type { Dialect, Storage, TenantInfo, TenantSummary } from '../types.js';

/** The organization a tenant belongs to; undefined for an unknown tenant. */
export async function tenantOrganization(db: Kysely<Database>, tenantId: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('tenants')
    .select('organization_id')
    .where('tenant_id', '=', tenantId)
    .executeTakeFirst();
  return row?.organization_id;
}

/** A tenant's SLA (the defaults when it set none, or when the tenant is unknown). */
export async function tenantSla(db: Kysely<Database>, tenantId: string): Promise<Sla> {
  const row = await db.selectFrom('tenants').select('sla').where('tenant_id', '=', tenantId).executeTakeFirst();
  return slaOf(row?.sla ?? null);
}

/** Bumps a tenant's data version after a write: it keys cached counts and ETags, which then never go stale. */
export const bumpDataVersion = (db: Kysely<Database>, tenantId: string): Promise<unknown> =>
  db
    .updateTable('tenants')
    .set((eb) => ({ data_version: eb('data_version', '+', 1) }))
    .where('tenant_id', '=', tenantId)
    .execute();

type TenantStore = Pick<Storage, 'tenantOrganization' | 'listTenants' | 'createTenant' | 'tenantSummaries'>;

export function tenantStore(db: Kysely<Database>, dialect: Dialect): TenantStore {
  const countsBy = async (table: 'assets' | 'vulnerabilities' | 'risks' | 'api_keys'): Promise<Map<string, number>> => {
    const rows = await db
      .selectFrom(table)
      .select((eb) => ['tenant_id', eb.fn.countAll<number | string>().as('n')])
      .groupBy('tenant_id')
      .execute();
    return new Map(rows.map((r) => [r.tenant_id, Number(r.n)]));
  };

  const listTenants = async (): Promise<TenantInfo[]> => {
    const rows = await db.selectFrom('tenants').selectAll().orderBy('tenant_id').execute();
    return rows.map((r) => ({ tenantId: r.tenant_id, organizationId: r.organization_id, name: r.name }));
  };

  return {
    tenantOrganization: (tenantId) => tenantOrganization(db, tenantId),
    listTenants,

    async createTenant(tenant, onWait) {
      const result = await writeTransaction(
        db,
        dialect,
        (tx) =>
          tx
            .insertInto('tenants')
            .values({ tenant_id: tenant.tenantId, organization_id: tenant.organizationId, name: tenant.name })
            .onConflict((oc) => oc.column('tenant_id').doNothing())
            .executeTakeFirst(),
        onWait,
      );
      return Number(result.numInsertedOrUpdatedRows ?? 0) === 1;
    },

    async tenantSummaries(): Promise<TenantSummary[]> {
      const tenants = await listTenants();
      const [assets, findings, risks, keys] = await Promise.all([
        countsBy('assets'),
        countsBy('vulnerabilities'),
        countsBy('risks'),
        countsBy('api_keys'),
      ]);
      return tenants.map((t) => ({
        ...t,
        assets: assets.get(t.tenantId) ?? 0,
        findings: findings.get(t.tenantId) ?? 0,
        risks: risks.get(t.tenantId) ?? 0,
        keys: keys.get(t.tenantId) ?? 0,
      }));
    },
  };
}
