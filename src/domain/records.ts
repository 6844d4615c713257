// The normalised import records handed from the importer to storage, one type per kind of record an import file may
// hold (docs/IMPORT.md).
import type { Asset } from './assets.js';
import type { DerivedAssetFields } from './derived.js';
import type { Exemption, Vulnerability } from './vulnerabilities.js';
import type { Integration, Risk } from './risks.js';

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
export type StoredVulnerability = Omit<Vulnerability, 'exemptions'>;

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
export interface VulnerabilityRecord {
  tenantId: string;
  vulnerability: StoredVulnerability;
  /** The scanner that reported it; its next scan of the asset replaces it. Absent or null when imported. */
  source?: string | null;
  /** Other ids of the same flaw (a GHSA's CVE), joined to the threat-intel feeds. */
  aliases?: readonly string[];
  /** Each package's purl matching key (src/domain/vex.ts purlKey), by position; for VEX statements. */
  purls?: readonly (string | null)[];
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
