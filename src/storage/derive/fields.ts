// Derived fields: which findings are exempted, by which exemptions, and the asset fields computed from the findings
// that are not (the rules are src/domain/exemptions.ts and src/domain/derived.ts; this file only reads and writes
// rows). Run inside the import transaction for the assets an import can have changed.
import { sql, type Kysely } from 'kysely';
import { deriveAssetFields, type CountedFinding } from '../../domain/derived.js';
import { compileExemption, matchingExemptions, type MatchableAsset } from '../../domain/exemptions.js';
import type { Exemption } from '../../domain/vulnerabilities.js';
import { chunks } from '../../lib/collections.js';
import { forAssetBatches } from '../db/batches.js';
import { fromTenant } from '../tx/tenant.js';
import type { AssetTable, Database, VulnerabilityTable } from '../db/tables.js';
import { DERIVED_COLUMNS } from '../read/assets/documents.js';
import { updateRows } from '../db/insert-rows.js';

const BATCH = 500;
const flag = (value: boolean): number => (value ? 1 : 0);

type Derived = Pick<
  AssetTable,
  | 'n_low'
  | 'n_medium'
  | 'n_high'
  | 'n_critical'
  | 'vulnerability_score'
  | 'is_vulnerable'
  | 'has_kev'
  | 'has_exploit'
  | 'is_exploitable'
>;

/**
 * Recomputes exemption matches and derived fields for the given assets of a tenant, or for all of them, as they are at
 * `now` (epoch milliseconds): an exemption past its `expiresAt` matches nothing.
 */
export async function recomputeDerived(
  db: Kysely<Database>,
  tenantId: string,
  scope: 'all' | ReadonlySet<string>,
  now: number,
): Promise<void> {
  const exemptionRows = await fromTenant(db, 'exemptions', tenantId)
    .select(['exemption_id', 'doc'])
    .orderBy('exemption_id')
    .execute();
  const exemptions = exemptionRows.map((r) => compileExemption(r.exemption_id, JSON.parse(r.doc) as Exemption));

  const selectAssets = () =>
    fromTenant(db, 'assets', tenantId)
      .select(['id', 'region', 'tags', ...DERIVED_COLUMNS])
      .orderBy('assets.id');

  await forAssetBatches(selectAssets, scope, BATCH, (assets) => recomputeBatch(db, tenantId, assets, exemptions, now));
}

/**
 * After a feed load, which changes the intel of findings and nothing else (not their severity, exploitability or
 * exemption), only the assets' `hasKev` and `hasExploit` can move: each is whether a finding that is not exempted has
 * the flag (src/domain/derived.ts, deriveAssetFields), which SQLite's flag indexes answer with one seek per asset
 * instead of reading every finding of the asset as recomputeDerived does (docs/DESIGN.md §41); PostgreSQL, which has no
 * flag index (§71), reads the asset's findings by the primary key and stops at the first flagged one. Needed where a
 * finding lost a flag; where findings only gained one, raiseIntelFlag below is enough.
 */
export async function refreshIntelFlags(
  db: Kysely<Database>,
  tenantId: string,
  assetIds: ReadonlySet<string>,
): Promise<void> {
  const flagged = (column: 'has_kev' | 'has_exploit') =>
    sql`case when exists (select 1 from vulnerabilities as v where v.tenant_id = assets.tenant_id
      and v.is_exempted = 0 and v.${sql.ref(column)} = 1 and v.asset_id = assets.id) then 1 else 0 end`;
  // Only the assets whose flags move are written: on PostgreSQL an asset row written is a new version in each of the
  // ~30 asset indexes once a flag changes (70 ms per 500 assets).
  for (const batch of chunks([...assetIds].sort(), BATCH))
    await sql`update assets set has_kev = f.kev, has_exploit = f.exploit
      from (select assets.id, ${flagged('has_kev')} as kev, ${flagged('has_exploit')} as exploit from assets
        where assets.tenant_id = ${tenantId} and assets.id in (${sql.join(batch)})) as f
      where assets.tenant_id = ${tenantId} and assets.id = f.id
        and (assets.has_kev <> f.kev or assets.has_exploit <> f.exploit)`.execute(db);
}

/**
 * Sets a flag on the given assets of a tenant, each of which has a finding, not exempted, that has just gained it: by
 * the same rule as above the asset has the flag now, whatever its other findings. No finding is read (on PostgreSQL
 * a first KEV load's seeks to confirm it cost 4.1 s, each a visit to a row the load had just written; §64).
 */
export async function raiseIntelFlag(
  db: Kysely<Database>,
  tenantId: string,
  column: 'has_kev' | 'has_exploit',
  assetIds: readonly string[],
): Promise<void> {
  for (const batch of chunks([...assetIds].sort(), BATCH))
    await db
      .updateTable('assets')
      .set(column, 1)
      .where('tenant_id', '=', tenantId)
      .where('id', 'in', batch)
      .where(column, '=', 0)
      .execute();
}

type AssetRow = Derived & { id: string; region: string | null; tags: string };

/** Findings read per statement: one scanned image can have 200,000, which must not all be rows in memory at once. */
const FINDINGS_PAGE = 5000;

/**
 * The findings of the assets, in key order, a page at a time. Two kinds of statement, each a seek on the primary key:
 * the rest of the asset a full page stopped in, then the assets after it.
 */
type FindingRow = Pick<
  VulnerabilityTable,
  | 'asset_id'
  | 'vulnerability_id'
  | 'severity_level_value'
  | 'has_kev'
  | 'has_exploit'
  | 'is_exploitable'
  | 'has_vendor_fix'
  | 'is_exempted'
>;

async function* findingsOf(
  db: Kysely<Database>,
  tenantId: string,
  assetIds: readonly string[],
): AsyncGenerator<FindingRow> {
  const select = () =>
    fromTenant(db, 'vulnerabilities', tenantId)
      .select([
        'asset_id',
        'vulnerability_id',
        'severity_level_value',
        'has_kev',
        'has_exploit',
        'is_exploitable',
        'has_vendor_fix',
        'is_exempted',
      ])
      .limit(FINDINGS_PAGE);
  let rest = [...assetIds].sort();
  let within: { assetId: string; after: string } | null = null;
  while (within !== null || rest.length > 0) {
    const page: FindingRow[] = await (
      within === null
        ? select().where('vulnerabilities.asset_id', 'in', rest).orderBy('asset_id').orderBy('vulnerability_id')
        : select()
            .where('vulnerabilities.asset_id', '=', within.assetId)
            .where('vulnerabilities.vulnerability_id', '>', within.after)
            .orderBy('vulnerability_id')
    ).execute();
    yield* page;
    const last = page[page.length - 1];
    if (page.length < FINDINGS_PAGE || last === undefined) {
      // The asset is done (or, reading the rest, every asset is).
      if (within === null) return;
      within = null;
    } else {
      within = { assetId: last.asset_id, after: last.vulnerability_id };
      rest = rest.filter((id) => id > last.asset_id);
    }
  }
}

async function recomputeBatch(
  db: Kysely<Database>,
  tenantId: string,
  assets: AssetRow[],
  exemptions: ReturnType<typeof compileExemption>[],
  now: number,
): Promise<void> {
  const assetIds = assets.map((a) => a.id);
  const groups = new Map<string, Set<string>>();
  if (exemptions.length > 0) {
    const members = await fromTenant(db, 'asset_group_members', tenantId)
      .select(['asset_id', 'asset_group_id'])
      .where('asset_group_members.asset_id', 'in', assetIds)
      .execute();
    for (const m of members) {
      const set = groups.get(m.asset_id) ?? new Set<string>();
      set.add(m.asset_group_id);
      groups.set(m.asset_id, set);
    }
  }

  const matchable = new Map<string, MatchableAsset>();
  for (const a of assets) {
    matchable.set(a.id, {
      region: a.region,
      tags: JSON.parse(a.tags) as MatchableAsset['tags'],
      groupIds: groups.get(a.id) ?? new Set(),
    });
  }

  const counted = new Map<string, CountedFinding[]>();
  const matches: { tenant_id: string; asset_id: string; vulnerability_id: string; exemption_id: string }[] = [];
  const nowExempted: [string, string][] = [];
  const nowCounted: [string, string][] = [];
  for await (const f of findingsOf(db, tenantId, assetIds)) {
    const asset = matchable.get(f.asset_id)!;
    const ids =
      exemptions.length === 0
        ? []
        : matchingExemptions(
            exemptions,
            { assetId: f.asset_id, vulnerabilityId: f.vulnerability_id, hasVendorFix: f.has_vendor_fix === 1 },
            asset,
            now,
          );
    for (const exemptionId of ids)
      matches.push({
        tenant_id: tenantId,
        asset_id: f.asset_id,
        vulnerability_id: f.vulnerability_id,
        exemption_id: exemptionId,
      });
    const exempted = ids.length > 0;
    if (exempted !== (f.is_exempted === 1))
      (exempted ? nowExempted : nowCounted).push([f.asset_id, f.vulnerability_id]);
    if (exempted) continue;
    const list = counted.get(f.asset_id) ?? [];
    list.push({
      severityLevelValue: f.severity_level_value,
      hasKev: f.has_kev === 1,
      hasExploit: f.has_exploit === 1,
      isExploitable: f.is_exploitable === 1,
    });
    counted.set(f.asset_id, list);
  }

  await db
    .deleteFrom('vulnerability_exemptions')
    .where('tenant_id', '=', tenantId)
    .where('asset_id', 'in', assetIds)
    .execute();
  for (let i = 0; i < matches.length; i += BATCH)
    await db
      .insertInto('vulnerability_exemptions')
      .values(matches.slice(i, i + BATCH))
      .execute();
  for (const [pairs, value] of [
    [nowExempted, 1],
    [nowCounted, 0],
  ] as const) {
    for (let i = 0; i < pairs.length; i += BATCH) {
      await db
        .updateTable('vulnerabilities')
        .set({ is_exempted: value })
        .where('tenant_id', '=', tenantId)
        .where((eb) =>
          eb(
            eb.refTuple('asset_id', 'vulnerability_id'),
            'in',
            pairs.slice(i, i + BATCH).map(([a, v]) => eb.tuple(a, v)),
          ),
        )
        .execute();
    }
  }

  const changed: (Derived & { id: string })[] = [];
  for (const a of assets) {
    const d = deriveAssetFields(counted.get(a.id) ?? []);
    const next: Derived = {
      n_low: d.numberOfLowVulnerabilities,
      n_medium: d.numberOfMediumVulnerabilities,
      n_high: d.numberOfHighVulnerabilities,
      n_critical: d.numberOfCriticalVulnerabilities,
      vulnerability_score: d.vulnerabilityScore,
      is_vulnerable: flag(d.isVulnerable),
      has_kev: flag(d.hasKev),
      has_exploit: flag(d.hasExploit),
      is_exploitable: flag(d.isExploitable),
    };
    if ((Object.keys(next) as (keyof Derived)[]).some((k) => next[k] !== a[k])) changed.push({ id: a.id, ...next });
  }
  await updateRows(
    db,
    'assets',
    tenantId,
    ['id'],
    DERIVED_COLUMNS,
    changed.map((c) => [c.id, ...DERIVED_COLUMNS.map((k) => c[k])]),
  );
}
