// Risk derivation: reads what the rules look at for each asset (src/domain/risk-engine.ts RiskSubject), runs the rules
// (src/domain/risk-rules.ts) and makes the tenant's derived risks agree with them, keeping each risk's discoveredAt and
// the lifecycle state a user gave it; then sets the riskScore of scanned assets from their OPEN risks (docs/RISKS.md).
// Runs inside the caller's transaction, for some assets of a tenant or all of them, in batches of assets.
import type { Kysely, Transaction } from 'kysely';
import type { FailedCheck } from '../domain/checks.js';
import { findingSeverities, type FindingSeverity, type LifecycleState } from '../domain/enums.js';
import { intelKeys } from '../domain/intel.js';
import {
  citesExploitable,
  isCitable,
  type RiskSubject,
  type SubjectFinding,
  type SubjectSecret,
  riskRecord,
} from '../domain/risk-engine.js';
import { deriveRisks } from '../domain/risk-rules.js';
import { appendTo, chunks, forAssetBatches, fromTenant } from './scope.js';
import { addUpdate, updateRows, upsertRows, type UpdateGroups } from './insert-rows.js';
import { documentOf } from './finding-documents.js';
import { scoreScannedAssets } from './risk-lifecycle.js';
import { tenantOrganization } from './tenants.js';
import type { Database } from './tables.js';

type Db = Kysely<Database> | Transaction<Database>;
const BATCH = 500;

/** What a derivation changed. */
export interface RiskDerivation {
  /** Assets whose rules ran. */
  assets: number;
  /** Derived risks on those assets after the run. */
  risks: number;
  added: number;
  updated: number;
  removed: number;
}

export const NO_DERIVATION: RiskDerivation = { assets: 0, risks: 0, added: 0, updated: 0, removed: 0 };

export const addDerivations = (a: RiskDerivation, b: RiskDerivation): RiskDerivation => ({
  assets: a.assets + b.assets,
  risks: a.risks + b.risks,
  added: a.added + b.added,
  updated: a.updated + b.updated,
  removed: a.removed + b.removed,
});

const SECRET_LEVELS = [
  ['criticalSecrets', 'CRITICAL'],
  ['highSecrets', 'HIGH'],
  ['mediumSecrets', 'MEDIUM'],
  ['lowSecrets', 'LOW'],
] as const;

const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);

function secretsOf(doc: Record<string, unknown>): SubjectSecret[] {
  const out: SubjectSecret[] = [];
  for (const [field, severity] of SECRET_LEVELS) {
    const list = doc[field];
    if (!Array.isArray(list)) continue;
    for (const s of list as Record<string, unknown>[]) {
      const title = str(s.title) ?? str(s.ruleId) ?? str(s.category) ?? str(s.type) ?? str(s.name) ?? 'a secret';
      out.push({ severity, title, target: str(s.target) ?? str(s.path) ?? str(s.location) });
    }
  }
  return out;
}

/** A citable finding as read for the risk rules: its narrow row's flags and intel, and its document. */
interface CitableRow {
  asset_id: string;
  vulnerability_id: string;
  has_kev: number;
  has_exploit: number;
  is_exploitable: number;
  doc: Buffer;
  intel: string | null;
}

function findingOf(row: CitableRow, epss: SubjectFinding['epss']): SubjectFinding {
  const doc = JSON.parse(Buffer.from(row.doc).toString('utf8')) as Record<string, unknown>;
  const intel = row.intel === null ? null : (JSON.parse(row.intel) as Record<string, unknown>);
  // The stored intel over the document's fields, read field by field: a merged copy of every finding's ~25 fields
  // cost more than parsing the intel.
  const field = (name: string): unknown => (intel !== null && name in intel ? intel[name] : doc[name]);
  const severityLevel = field('severityLevel');
  const severity = (findingSeverities as readonly string[]).includes(severityLevel as string)
    ? (severityLevel as FindingSeverity)
    : 'UNKNOWN';
  const known = field('knownExploit') as Record<string, unknown> | null | undefined;
  const listed = field('packages');
  const packages = Array.isArray(listed) ? (listed as Record<string, unknown>[]) : [];
  const cited = field('exploits');
  const exploits = Array.isArray(cited) ? (cited as Record<string, unknown>[]) : [];
  return {
    vulnerabilityId: row.vulnerability_id,
    title: str(field('title')),
    severity,
    hasKev: row.has_kev === 1,
    hasExploit: row.has_exploit === 1,
    isExploitable: row.is_exploitable === 1,
    epss,
    knownExploit: known
      ? { dateAdded: str(known.dateAdded), dueDate: str(known.dueDate), requiredAction: str(known.requiredAction) }
      : null,
    exploitIds: exploits.map((e) => str(e.id)).filter((id): id is string => id !== null),
    packages: packages.map((p) => ({
      packageName: str(p.packageName),
      installedVersion: str(p.installedVersion),
      fixedVersion: str(p.fixedVersion),
    })),
  };
}

/** The production integrations of a tenant: an asset is in production when its integration's environment is. */
async function productionIntegrations(db: Db, tenantId: string): Promise<Set<string>> {
  const rows = await fromTenant(db as Kysely<Database>, 'integrations', tenantId)
    .innerJoin('environments', (j) =>
      j
        .onRef('environments.tenant_id', '=', 'integrations.tenant_id')
        .onRef('environments.environment_id', '=', 'integrations.environment_id'),
    )
    .select('integrations.integration_id')
    .where('environments.is_production', '=', 1)
    .execute();
  return new Set(rows.map((r) => r.integration_id));
}

/** What an asset row says of its reach, as the rules read it (exposure and privileges). */
export const reachOf = (a: {
  is_publicly_exposed: number;
  has_admin_privileges: number;
  has_overly_permissive_privileges: number;
}): Parameters<typeof citesExploitable>[0] => ({
  isPubliclyExposed: a.is_publicly_exposed === 1,
  hasAdminPrivileges: a.has_admin_privileges === 1,
  hasOverlyPermissivePrivileges: a.has_overly_permissive_privileges === 1,
});

/**
 * The tenant's assets with at least one finding the risk rules can cite (src/domain/risk-engine.ts isCitable): not
 * exempted, and known-exploited, or exploitable on a publicly exposed or privileged asset. Only their risks can move
 * when nothing but EPSS scores changed: EPSS weighs in the likelihood of a cited finding and decides nothing else.
 * Mirrors isCitable and citesExploitable; test/feeds/risk-scope.test.ts proves they agree.
 */
export async function assetsWithCitableFindings(db: Db, tenantId: string): Promise<Set<string>> {
  const q = db as Kysely<Database>;
  const known = await fromTenant(q, 'vulnerabilities', tenantId)
    .select('vulnerabilities.asset_id')
    .distinct()
    .where('vulnerabilities.is_exempted', '=', 0)
    .where('vulnerabilities.has_kev', '=', 1)
    .execute();
  const exploitable = await fromTenant(q, 'assets', tenantId)
    .select('assets.id as asset_id')
    .where((eb) =>
      eb.or([
        eb('assets.is_publicly_exposed', '=', 1),
        eb('assets.has_admin_privileges', '=', 1),
        eb('assets.has_overly_permissive_privileges', '=', 1),
      ]),
    )
    .where((eb) =>
      eb.exists(
        eb
          .selectFrom('vulnerabilities')
          .select('vulnerabilities.asset_id')
          .whereRef('vulnerabilities.tenant_id', '=', 'assets.tenant_id')
          .whereRef('vulnerabilities.asset_id', '=', 'assets.id')
          .where('vulnerabilities.is_exempted', '=', 0)
          .where('vulnerabilities.is_exploitable', '=', 1),
      ),
    )
    .execute();
  return new Set([...known, ...exploitable].map((r) => r.asset_id));
}

/** The asset columns the rules read, in id order. */
const assetQuery = (db: Db, tenantId: string) =>
  fromTenant(db as Kysely<Database>, 'assets', tenantId)
    .select([
      'id',
      'name',
      'resource_type',
      'region',
      'integration_id',
      'is_publicly_exposed',
      'has_admin_privileges',
      'has_overly_permissive_privileges',
      'n_low_secrets',
      'n_medium_secrets',
      'n_high_secrets',
      'n_critical_secrets',
      'scanned',
      'risk_score',
    ])
    .orderBy('assets.id');

type AssetRow = Awaited<ReturnType<ReturnType<typeof assetQuery>['execute']>>[number];

/** Derives the risks of the given assets of a tenant (or of all its assets) and writes what changed. */
export async function deriveTenantRisks(
  db: Db,
  tenantId: string,
  scope: 'all' | ReadonlySet<string>,
  at: string,
): Promise<RiskDerivation> {
  const organizationId = await tenantOrganization(db, tenantId);
  if (organizationId === undefined) return NO_DERIVATION;
  const production = await productionIntegrations(db, tenantId);
  let total = NO_DERIVATION;
  await forAssetBatches(
    () => assetQuery(db, tenantId),
    scope,
    BATCH,
    async (assets) => {
      total = addDerivations(total, await deriveBatch(db, tenantId, organizationId, production, assets, at));
    },
  );
  if (scope === 'all') {
    // Risks derived for an asset that is no longer in the inventory leave with it.
    const orphans = await fromTenant(db as Kysely<Database>, 'risks', tenantId)
      .select('risks.id')
      .where('risks.derived', '=', 1)
      .where((eb) =>
        eb.not(
          eb.exists(
            eb
              .selectFrom('assets')
              .select('assets.id')
              .whereRef('assets.tenant_id', '=', 'risks.tenant_id')
              .whereRef('assets.id', '=', 'risks.primary_asset_id'),
          ),
        ),
      )
      .execute();
    for (const ids of chunks(orphans.map((o) => o.id)))
      await db.deleteFrom('risks').where('tenant_id', '=', tenantId).where('id', 'in', ids).execute();
    total = { ...total, removed: total.removed + orphans.length };
    return total;
  }
  return total;
}

async function deriveBatch(
  db: Db,
  tenantId: string,
  organizationId: string,
  production: ReadonlySet<string>,
  assets: AssetRow[],
  at: string,
): Promise<RiskDerivation> {
  const assetIds = assets.map((a) => a.id);
  const q = db as Kysely<Database>;

  // Secrets live in the asset's document: read it only for assets that have some.
  const withSecrets = assets
    .filter((a) => a.n_low_secrets + a.n_medium_secrets + a.n_high_secrets + a.n_critical_secrets > 0)
    .map((a) => a.id);
  const secrets = new Map<string, SubjectSecret[]>();
  for (const ids of chunks(withSecrets)) {
    const rows = await fromTenant(q, 'asset_documents', tenantId)
      .select(['asset_id', 'doc'])
      .where('asset_documents.asset_id', 'in', ids)
      .execute();
    for (const r of rows)
      secrets.set(r.asset_id, secretsOf(JSON.parse(Buffer.from(r.doc).toString('utf8')) as Record<string, unknown>));
  }

  // Only findings a rule can cite, as src/domain/risk-engine.ts isCitable says: not exempted, and known-exploited, or
  // exploitable on an exposed or privileged asset.
  const reach = new Map(assets.map((a) => [a.id, reachOf(a)]));
  const exploitableOn = new Set(assetIds.filter((id) => citesExploitable(reach.get(id)!)));
  const findingRows: CitableRow[] = [];
  for (const ids of chunks(assetIds)) {
    const exploitable = ids.filter((id) => exploitableOn.has(id));
    findingRows.push(
      ...(await fromTenant(q, 'vulnerabilities', tenantId)
        .select([
          'vulnerabilities.asset_id',
          'vulnerabilities.vulnerability_id',
          'vulnerabilities.has_kev',
          'vulnerabilities.has_exploit',
          'vulnerabilities.is_exploitable',
          documentOf().as('doc'),
          'vulnerabilities.intel',
        ])
        .where('vulnerabilities.asset_id', 'in', ids)
        .where('vulnerabilities.is_exempted', '=', 0)
        .where((eb) =>
          eb.or([
            eb('vulnerabilities.has_kev', '=', 1),
            ...(exploitable.length === 0
              ? []
              : [
                  eb.and([
                    eb('vulnerabilities.is_exploitable', '=', 1),
                    eb('vulnerabilities.asset_id', 'in', exploitable),
                  ]),
                ]),
          ]),
        )
        .execute()),
    );
  }
  const epss = await epssOf(q, tenantId, findingRows);
  const findings = new Map<string, SubjectFinding[]>();
  for (const row of findingRows) {
    const finding = findingOf(row, epss.get(`${row.asset_id}\u0000${row.vulnerability_id}`) ?? null);
    if (isCitable(finding, reach.get(row.asset_id)!)) appendTo(findings, row.asset_id, finding);
  }

  const checks = new Map<string, FailedCheck[]>();
  for (const ids of chunks(assetIds)) {
    const rows = await fromTenant(q, 'checks', tenantId)
      .select(['asset_id', 'doc'])
      .where('checks.asset_id', 'in', ids)
      .orderBy('checks.check_id')
      .orderBy('checks.source')
      .execute();
    for (const r of rows) appendTo(checks, r.asset_id, JSON.parse(r.doc) as FailedCheck);
  }

  const derived = assets.flatMap((a) => {
    const subject: RiskSubject = {
      tenantId,
      organizationId,
      asset: {
        id: a.id,
        name: a.name,
        resourceType: a.resource_type,
        region: a.region,
        integrationId: a.integration_id,
        ...reach.get(a.id)!,
        isProduction: a.integration_id !== null && production.has(a.integration_id),
        secrets: secrets.get(a.id) ?? [],
      },
      findings: findings.get(a.id) ?? [],
      checks: checks.get(a.id) ?? [],
    };
    return deriveRisks(subject);
  });
  const counts = await writeRisks(db, tenantId, assetIds, derived, at);
  await scoreScannedAssets(
    db,
    tenantId,
    assets.filter((a) => a.scanned === 1),
  );
  return { assets: assets.length, ...counts };
}

/** The highest EPSS score of each finding's id and aliases, keyed by asset and vulnerability id. */
async function epssOf(
  db: Kysely<Database>,
  tenantId: string,
  rows: readonly { asset_id: string; vulnerability_id: string }[],
): Promise<Map<string, SubjectFinding['epss']>> {
  const out = new Map<string, SubjectFinding['epss']>();
  if (rows.length === 0) return out;
  const aliases = new Map<string, string[]>();
  for (const ids of chunks([...new Set(rows.map((r) => r.asset_id))])) {
    const found = await fromTenant(db, 'vulnerability_aliases', tenantId)
      .select(['asset_id', 'vulnerability_id', 'alias'])
      .where('vulnerability_aliases.asset_id', 'in', ids)
      .execute();
    for (const a of found) appendTo(aliases, `${a.asset_id}\u0000${a.vulnerability_id}`, a.alias);
  }
  const keysOf = new Map<string, string[]>();
  for (const r of rows) {
    const key = `${r.asset_id}\u0000${r.vulnerability_id}`;
    keysOf.set(key, intelKeys(r.vulnerability_id, aliases.get(key)));
  }
  const scores = new Map<string, { epss: number; percentile: number }>();
  for (const cves of chunks([...new Set([...keysOf.values()].flat())].sort())) {
    const found = await db
      .selectFrom('feed_epss')
      .select(['cve_id', 'epss', 'percentile'])
      .where('cve_id', 'in', cves)
      .execute();
    for (const s of found) scores.set(s.cve_id, { epss: Number(s.epss), percentile: Number(s.percentile) });
  }
  for (const [key, cves] of keysOf) {
    let best: SubjectFinding['epss'] = null;
    for (const cve of cves) {
      const s = scores.get(cve);
      if (s && (best === null || s.epss > best.score)) best = { score: s.epss, percentile: s.percentile, cveId: cve };
    }
    if (best) out.set(key, best);
  }
  return out;
}

/** A derived risk as stored: what a new derivation keeps, the columns it may move, and the document it compares. */
interface StoredRisk {
  discovered_at: string;
  lifecycle_state: string;
  integration_id: string | null;
  severity_level: string;
  resource_type: string | null;
  score: number;
  doc: Buffer;
}

/** Makes the stored derived risks of these assets equal to `derived`, keeping discoveredAt and lifecycle states. */
async function writeRisks(
  db: Db,
  tenantId: string,
  assetIds: readonly string[],
  derived: ReturnType<typeof deriveRisks>,
  at: string,
): Promise<Omit<RiskDerivation, 'assets'>> {
  const q = db as Kysely<Database>;
  const existing = new Map<string, StoredRisk>();
  for (const ids of chunks(assetIds)) {
    const rows = await fromTenant(q, 'risks', tenantId)
      .select([
        'id',
        'discovered_at',
        'lifecycle_state',
        'integration_id',
        'severity_level',
        'resource_type',
        'score',
        'doc',
      ])
      .where('risks.derived', '=', 1)
      .where('risks.primary_asset_id', 'in', ids)
      .execute();
    for (const r of rows) existing.set(r.id, r);
  }
  const fresh = derived.filter((r) => !existing.has(r.id)).map((r) => r.id);
  const remembered = new Map<string, string>();
  for (const ids of chunks(fresh)) {
    const rows = await fromTenant(q, 'risk_states', tenantId)
      .select(['risk_id', 'lifecycle_state'])
      .where('risk_states.risk_id', 'in', ids)
      .execute();
    for (const r of rows) remembered.set(r.risk_id, r.lifecycle_state);
  }
  const inserted = [];
  // A stored risk keeps its id, type, asset, date and state: only the columns that moved are written, grouped by which
  // moved, so that neither database rewrites the entries of indexes whose columns kept their values (§58).
  const updated: UpdateGroups = new Map();
  let changed = 0;
  for (const risk of derived) {
    const before = existing.get(risk.id);
    const state = (before?.lifecycle_state ?? remembered.get(risk.id) ?? 'OPEN') as LifecycleState;
    const doc = Buffer.from(JSON.stringify(riskRecord(risk, before?.discovered_at ?? at, state)));
    if (before === undefined) {
      inserted.push({
        tenant_id: tenantId,
        id: risk.id,
        risk_type_id: risk.riskTypeId,
        integration_id: risk.integrationId,
        primary_asset_id: risk.primaryAssetId,
        severity_level: risk.severityLevel,
        lifecycle_state: state,
        resource_type: risk.meta?.resourceType ?? null,
        discovered_at: at,
        score: risk.score,
        doc,
        derived: 1,
      });
      continue;
    }
    if (Buffer.from(before.doc).equals(doc)) continue;
    changed += 1;
    addUpdate(
      updated,
      [risk.id],
      [['doc', doc]],
      [
        ['integration_id', risk.integrationId, before.integration_id],
        ['severity_level', risk.severityLevel, before.severity_level],
        ['resource_type', risk.meta?.resourceType ?? null, before.resource_type],
        ['score', risk.score, before.score],
      ],
    );
  }
  await upsertRows(db, 'risks', ['tenant_id', 'id'], inserted, 200);
  for (const { columns, rows } of updated.values()) await updateRows(db, 'risks', tenantId, ['id'], columns, rows);
  const keep = new Set(derived.map((r) => r.id));
  const gone = [...existing.keys()].filter((id) => !keep.has(id));
  for (const ids of chunks(gone))
    await db.deleteFrom('risks').where('tenant_id', '=', tenantId).where('id', 'in', ids).execute();
  return { risks: derived.length, added: inserted.length, updated: changed, removed: gone.length };
}
