// The risk rules' side of a derivation, without I/O: from what storage read for a batch of assets (their rows,
// secrets, citable findings, EPSS scores, failed checks and stored risks) to the rows to write. A large derivation runs
// it on a thread of its own (src/storage/derive/risks/thread.ts), beside the reads and writes of the batches before and after
// (docs/DESIGN.md §59); everything here crosses threads as structured clones (documents as bytes, maps as entries).
import type { FailedCheck } from '../../../domain/checks.js';
import { findingSeverities, type FindingSeverity, type LifecycleState } from '../../../domain/enums.js';
import {
  citesExploitable,
  isCitable,
  riskRecord,
  type RiskSubject,
  type SubjectFinding,
  type SubjectSecret,
} from '../../../domain/risk-engine.js';
import { deriveRisks } from '../../../domain/risk-rules.js';
import { addUpdate, type UpdateGroups } from '../../db/insert-rows.js';
import { appendTo } from '../../../lib/collections.js';
import type { RiskTable } from '../../db/tables.js';

/** The asset columns the rules read. */
export interface RiskAssetRow {
  id: string;
  name: string | null;
  resource_type: string | null;
  region: string | null;
  integration_id: string | null;
  is_publicly_exposed: number;
  has_admin_privileges: number;
  has_overly_permissive_privileges: number;
  n_low_secrets: number;
  n_medium_secrets: number;
  n_high_secrets: number;
  n_critical_secrets: number;
  scanned: number;
  risk_score: number | null;
}

/** A citable finding as read for the risk rules: its narrow row's flags and intel, and its document. */
export interface CitableRow {
  asset_id: string;
  vulnerability_id: string;
  has_kev: number;
  has_exploit: number;
  is_exploitable: number;
  /** The stored document as text. */
  doc: string;
  intel: string | null;
}

/** A derived risk as stored: what a new derivation keeps, the columns it may move, and the document it compares. */
export interface StoredRisk {
  discovered_at: string;
  lifecycle_state: string;
  integration_id: string | null;
  severity_level: string;
  resource_type: string | null;
  score: number;
  /** The stored document as text, compared with the one the rules make now. */
  doc: string;
}

/** What the rules need of a batch of assets. */
export interface RiskBatch {
  tenantId: string;
  organizationId: string;
  at: string;
  /** The tenant's integrations in a production environment. */
  production: readonly string[];
  assets: RiskAssetRow[];
  /** The documents of the assets that have secrets, as text. */
  secrets: [assetId: string, doc: string][];
  findings: CitableRow[];
  /** The best EPSS score of each finding, by asset and vulnerability id. */
  epss: [key: string, epss: SubjectFinding['epss']][];
  /** The assets' failed checks, in check id and source order. */
  checks: [assetId: string, doc: string][];
  /** The batch's stored derived risks, by id. */
  existing: [id: string, risk: StoredRisk][];
}

/** A new derived risk's row, its document as bytes (a Buffer arrives from a thread as a Uint8Array). */
export type RiskRow = Omit<RiskTable, 'doc' | 'derived'> & { doc: Uint8Array; derived: number };

/** What a batch's derivation writes. New risks are OPEN: the caller gives them a state a user set before, if any. */
export interface RiskWrites {
  inserted: RiskRow[];
  /** Stored risks whose document changed, grouped by the columns that moved (src/storage/db/insert-rows.ts). */
  updates: { columns: string[]; rows: unknown[][] }[];
  /** Stored risks the rules no longer make. */
  gone: string[];
  /** Derived risks of the batch after the run. */
  risks: number;
}

const SECRET_LEVELS = [
  ['criticalSecrets', 'CRITICAL'],
  ['highSecrets', 'HIGH'],
  ['mediumSecrets', 'MEDIUM'],
  ['lowSecrets', 'LOW'],
] as const;

const utf8 = new TextDecoder();
const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);
/** A stored JSON document's bytes (a Buffer, or the Uint8Array it becomes across threads), parsed. */
export const parsed = (bytes: Uint8Array): Record<string, unknown> =>
  JSON.parse(utf8.decode(bytes)) as Record<string, unknown>;

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

function findingOf(row: CitableRow, epss: SubjectFinding['epss']): SubjectFinding {
  const doc = JSON.parse(row.doc) as Record<string, unknown>;
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

/** Runs the rules over a batch of assets and compares what they make with the stored risks. */
export function computeRisks(batch: RiskBatch): RiskWrites {
  const { tenantId, at } = batch;
  const production = new Set(batch.production);
  const reach = new Map(batch.assets.map((a) => [a.id, reachOf(a)]));
  const epss = new Map(batch.epss);
  const secrets = new Map(
    batch.secrets.map(([id, doc]) => [id, secretsOf(JSON.parse(doc) as Record<string, unknown>)]),
  );
  const findings = new Map<string, SubjectFinding[]>();
  for (const row of batch.findings) {
    const finding = findingOf(row, epss.get(`${row.asset_id}\u0000${row.vulnerability_id}`) ?? null);
    if (isCitable(finding, reach.get(row.asset_id)!)) appendTo(findings, row.asset_id, finding);
  }
  const checks = new Map<string, FailedCheck[]>();
  for (const [id, doc] of batch.checks) appendTo(checks, id, JSON.parse(doc) as FailedCheck);
  const derived = batch.assets.flatMap((a) => {
    const subject: RiskSubject = {
      tenantId,
      organizationId: batch.organizationId,
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

  const existing = new Map(batch.existing);
  const inserted: RiskRow[] = [];
  // A stored risk keeps its id, type, asset, date and state: only the columns that moved are written, grouped by which
  // moved, so that neither database rewrites the entries of indexes whose columns kept their values (§58).
  const updates: UpdateGroups = new Map();
  for (const risk of derived) {
    const before = existing.get(risk.id);
    const state = (before?.lifecycle_state ?? 'OPEN') as LifecycleState;
    const text = JSON.stringify(riskRecord(risk, before?.discovered_at ?? at, state));
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
        doc: Buffer.from(text),
        derived: 1,
      });
      continue;
    }
    if (text === before.doc) continue;
    addUpdate(
      updates,
      [risk.id],
      [['doc', Buffer.from(text)]],
      [
        ['integration_id', risk.integrationId, before.integration_id],
        ['severity_level', risk.severityLevel, before.severity_level],
        ['resource_type', risk.meta?.resourceType ?? null, before.resource_type],
        ['score', risk.score, before.score],
      ],
    );
  }
  const keep = new Set(derived.map((r) => r.id));
  return {
    inserted,
    updates: [...updates.values()],
    gone: [...existing.keys()].filter((id) => !keep.has(id)),
    risks: derived.length,
  };
}
