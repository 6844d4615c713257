// The normalised import records handed from the importer to storage, one type per kind of record an import file may
// hold (docs/IMPORT.md).
import type { Asset } from './assets.js';
import type { DerivedAssetFields } from './derived.js';
import type { Exemption, Vulnerability } from './vulnerabilities.js';
import type { Integration, Risk } from './risks.js';
import { withoutIntel } from './intel.js';

export const importKinds = [
  'tenant',
  'environment',
  'integration',
  'assetGroup',
  'exemption',
  'asset',
  'vulnerability',
  'risk',
] as const;
export type ImportKind = (typeof importKinds)[number];

/** The asset as imported: the API object without the fields the service derives from findings. */
export type StoredAsset = Omit<Asset, keyof DerivedAssetFields>;
export type StoredVulnerability = Omit<Vulnerability, 'exemptions' | 'dueAt' | 'isOverdue'>;

export interface TenantRecord {
  tenantId: string;
  organizationId: string;
  name: string | null;
}
export interface EnvironmentRecord {
  tenantId: string;
  environmentId: string;
  name: string | null;
  isProduction: boolean;
}
export interface IntegrationRecord {
  tenantId: string;
  integrationId: string;
  environmentId: string | null;
  integration: Integration;
}
export interface AssetGroupRecord {
  tenantId: string;
  assetGroupId: string;
  name: string | null;
  assetIds: string[];
}
export interface ExemptionRecord {
  tenantId: string;
  exemptionId: string;
  exemption: Exemption;
}
export interface AssetRecord {
  tenantId: string;
  asset: StoredAsset;
  rawData: Record<string, unknown>;
}
interface FindingRecord {
  tenantId: string;
  /** The scanner that reported it; its next scan of the asset replaces it. Absent or null when imported. */
  source?: string | null;
  /** Other ids of the same flaw (a GHSA's CVE), joined to the threat-intel feeds. */
  aliases?: readonly string[];
  /** Each package's purl matching key (src/domain/vex.ts purlKey), by position; for VEX statements. */
  purls?: readonly (string | null)[];
}

/** What the writer reads of a finding besides its stored document: its columns, intel and packages' columns. */
export type FindingColumns = Pick<
  StoredVulnerability,
  | 'assetId'
  | 'vulnerabilityId'
  | 'integrationId'
  | 'executionId'
  | 'provider'
  | 'severityLevelValue'
  | 'hasKev'
  | 'hasExploit'
  | 'isExploitable'
  | 'hasVendorFix'
  | 'firstObservedAt'
  | 'lastObservedAt'
  | 'knownExploit'
  | 'exploits'
> & {
  packages: Pick<
    StoredVulnerability['packages'][number],
    'packageName' | 'targetName' | 'targetType' | 'targetClass'
  >[];
};

/**
 * A finding to write: whole, or as its columns with its stored document already made (findingDocument), which is how
 * the import's reading thread hands findings over: a fifth of the bytes to copy between threads, and no
 * serialising on the writing thread.
 */
export type WholeFinding = FindingRecord & { vulnerability: StoredVulnerability; document?: undefined };
export type VulnerabilityRecord =
  WholeFinding | (FindingRecord & { vulnerability: FindingColumns; document: Uint8Array });

/** A finding's stored document: its JSON without the intel fields (docs/DESIGN.md §44), UTF-8. */
export const findingDocument = (v: StoredVulnerability): Uint8Array => utf8.encode(JSON.stringify(withoutIntel(v)));
// One encoder for every document: making one per call cost half as much again as the encoding.
const utf8 = new TextEncoder();

/** A whole finding as its columns and its stored document. */
export function preparedFinding(record: WholeFinding): VulnerabilityRecord {
  const v = record.vulnerability;
  const columns: FindingColumns = {
    assetId: v.assetId,
    vulnerabilityId: v.vulnerabilityId,
    integrationId: v.integrationId,
    executionId: v.executionId,
    provider: v.provider,
    severityLevelValue: v.severityLevelValue,
    hasKev: v.hasKev,
    hasExploit: v.hasExploit,
    isExploitable: v.isExploitable,
    hasVendorFix: v.hasVendorFix,
    firstObservedAt: v.firstObservedAt,
    lastObservedAt: v.lastObservedAt,
    knownExploit: v.knownExploit,
    exploits: v.exploits,
    packages: v.packages.map((p) => ({
      packageName: p.packageName,
      targetName: p.targetName,
      targetType: p.targetType,
      targetClass: p.targetClass,
    })),
  };
  return { ...record, vulnerability: columns, document: findingDocument(v) };
}

export interface RiskRecord {
  tenantId: string;
  risk: Risk;
}

export interface RecordsByKind {
  tenant: TenantRecord;
  environment: EnvironmentRecord;
  integration: IntegrationRecord;
  assetGroup: AssetGroupRecord;
  exemption: ExemptionRecord;
  asset: AssetRecord;
  vulnerability: VulnerabilityRecord;
  risk: RiskRecord;
}
