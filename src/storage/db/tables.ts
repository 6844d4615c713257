// Row types of the database. Rows are not API types: each resource has one mapper between the two.
// Booleans are stored as 0/1 integers and timestamps as `yyyy-MM-ddTHH:mm:ss.SSSZ` text on both dialects, so every
// comparison and sort means the same thing on SQLite and PostgreSQL.
import type { ColumnType, Generated } from 'kysely';

export interface TenantTable {
  tenant_id: string;
  organization_id: string;
  name: string | null;
  /** Bumped by every import that touches the tenant; keys cached answers (counts) so they never go stale. */
  data_version: Generated<number>;
  /** The position of the tenant's last change (migration 0020). */
  change_seq: Generated<number>;
  /** The last position retention removed from the tenant's log. */
  changes_pruned_seq: Generated<number>;
  /** The SLA days per severity as JSON (src/domain/remediation.ts); null: the defaults (migration 0022). */
  sla: string | null;
  /** The earliest time one of the tenant's dismissals or exemptions expires; null: none does. */
  next_expiry_at: string | null;
}

export interface EnvironmentTable {
  tenant_id: string;
  environment_id: string;
  /** Lower-cased id: environmentIds items match UUIDs case-insensitively. */
  environment_id_lc: string;
  name: string | null;
  is_production: number;
}

export interface IntegrationTable {
  tenant_id: string;
  integration_id: string;
  environment_id: string | null;
  doc: Buffer;
}

export interface AssetGroupTable {
  tenant_id: string;
  asset_group_id: string;
  name: string | null;
}

export interface AssetGroupMemberTable {
  tenant_id: string;
  asset_group_id: string;
  asset_id: string;
}

export interface ExemptionTable {
  tenant_id: string;
  exemption_id: string;
  /** The Exemption object of the API as JSON. */
  doc: string;
  /** When the exemption stops applying (its `expiresAt`); null: never. */
  expires_at: string | null;
}

export interface AssetTable {
  tenant_id: string;
  id: string;
  integration_id: string | null;
  execution_id: number | null;
  provider: string;
  name: string | null;
  name_lc: string | null;
  region: string | null;
  service: string | null;
  service_lc: string | null;
  /** Lower-cased part of `service` after `::`: a bare `services` item matches it for any provider. */
  service_name_lc: string | null;
  resource_type: string | null;
  first_observed_at: string;
  last_observed_at: string;
  risk_score: number | null;
  operational_state: string | null;
  is_publicly_exposed: number;
  has_admin_privileges: number;
  has_overly_permissive_privileges: number;
  is_susceptible_to_privilege_escalation: number;
  n_low_secrets: number;
  n_medium_secrets: number;
  n_high_secrets: number;
  n_critical_secrets: number;
  // Derived from non-exempted findings (src/storage/derive/fields.ts).
  n_low: number;
  n_medium: number;
  n_high: number;
  n_critical: number;
  vulnerability_score: number;
  is_vulnerable: number;
  has_kev: number;
  has_exploit: number;
  is_exploitable: number;
  /** JSON array of the asset's `{Key, Value}` tags, for exemption matching. */
  tags: string;
  /** 1 when a scanner's report made or updated the asset: its riskScore is then derived from its risks. */
  scanned: Generated<number>;
}

/**
 * An asset's documents, one row per asset, apart from the narrow `assets` row that every filter, sort and count reads:
 * ~3 KB of JSON per asset would otherwise make each of those read ~8× the pages (docs/DESIGN.md §26).
 */
export interface AssetDocumentTable {
  tenant_id: string;
  asset_id: string;
  /** The API object as UTF-8 JSON, without the derived fields (spliced in when served) and without rawData. */
  doc: Buffer;
  raw_data: string;
  /** Lower-cased keys and scalar values of rawData joined by U+001F, for the `metadata` filter. */
  meta_search: string;
}

export interface VulnerabilityTable {
  tenant_id: string;
  asset_id: string;
  vulnerability_id: string;
  integration_id: string | null;
  execution_id: string | null;
  provider: string | null;
  severity_level_value: number;
  has_kev: number;
  has_exploit: number;
  is_exploitable: number;
  has_vendor_fix: number;
  is_exempted: number;
  first_observed_at: string;
  last_observed_at: string;
  /** The scanner that reported it (`trivy`, `grype`…), whose next scan of the asset replaces it; null when imported. */
  source: string | null;
  /** `hasKev`, `hasExploit`, `knownExploit` and `exploits` as one JSON object, the finding's own values merged with
   * the loaded feeds'; null when all four are empty. Spliced into the document when served (docs/DESIGN.md §44). */
  intel: string | null;
  /** The intel fields (`hasKev`, `knownExploit`…) the finding's own file gave, as JSON; null when it gave none. */
  own_intel: string | null;
  /** When it is due (src/domain/remediation.ts `dueAt`); null: its severity has no SLA and it is not in KEV. */
  due_at: string | null;
  /** The finding's integer id, given when its row is first written and kept while it exists: its document's key
   * (docs/DESIGN.md §45). Not an API field. */
  id: Generated<number>;
}

/** A finding's stored API object as UTF-8 JSON, without `exemptions` and the intel fields (both spliced in when
 * served), apart from the narrow row every filter, sort and count reads. */
export interface VulnerabilityDocumentTable {
  tenant_id: string;
  /** `vulnerabilities.id` of the finding. */
  finding_id: number;
  doc: Buffer;
}

/** A finding's other ids (CVE aliases of a GHSA, a distro advisory's CVE), upper-cased, for the feed joins. */
export interface VulnerabilityAliasTable {
  tenant_id: string;
  asset_id: string;
  vulnerability_id: string;
  alias: string;
}

/** Global: each loaded feed, its version and when it was loaded. */
export interface FeedTable {
  feed: string;
  version: string | null;
  entries: number;
  loaded_at: string;
  /** The file or address it was loaded from. */
  source: string | null;
}

/** Global: the CISA KEV catalog, one entry (src/domain/intel.ts KevEntry, as JSON) per CVE. */
export interface FeedKevTable {
  cve_id: string;
  entry: string;
}

/** Global: Exploit-DB, one row per (CVE, exploit) with the finding's `exploits` entry as JSON. */
export interface FeedExploitTable {
  cve_id: string;
  exploit_id: string;
  entry: string;
}

/** Global: FIRST EPSS scores per CVE. */
export interface FeedEpssTable {
  cve_id: string;
  epss: number;
  percentile: number;
}

export interface VulnerabilityPackageTable {
  tenant_id: string;
  asset_id: string;
  vulnerability_id: string;
  position: number;
  package_name: string | null;
  target_name: string | null;
  target_type: string | null;
  target_class: string | null;
  /** The package's purl as a matching key (src/domain/vex.ts purlKey), for VEX statements; null when unknown. */
  purl: string | null;
}

/** A tenant's VEX statements, one per (document, vulnerability, product): the latest the document makes on it. */
export interface VexStatementTable {
  tenant_id: string;
  document_id: string;
  vulnerability_id: string;
  /** src/domain/vex.ts productText: `purl:…`, `image:sha256:…` or `asset:…`. */
  product: string;
  exempting: number;
  /** The VexStatement as JSON. */
  statement: string;
}

export interface VulnerabilityExemptionTable {
  tenant_id: string;
  asset_id: string;
  vulnerability_id: string;
  exemption_id: string;
}

export interface RiskTable {
  tenant_id: string;
  id: string;
  risk_type_id: string | null;
  integration_id: string | null;
  primary_asset_id: string | null;
  severity_level: string;
  lifecycle_state: string;
  resource_type: string | null;
  discovered_at: string;
  score: number;
  /** Read as a Buffer; written from any bytes, such as the Uint8Array a document becomes across threads. */
  doc: ColumnType<Buffer, Uint8Array, Uint8Array>;
  /** 1 when the risk rules derived it (docs/RISKS.md): each derivation replaces these, never an imported risk. */
  derived: Generated<number>;
}

/** The lifecycle state a user gave a risk (`secinv risks dismiss|reopen`), kept by risk id across re-derivations. */
export interface RiskStateTable {
  tenant_id: string;
  risk_id: string;
  lifecycle_state: string;
  changed_at: string;
  /** When a dismissal ends and the risk reopens by itself; null: never. */
  until: string | null;
}

/** A failed configuration check a scanner reported on an asset (Prowler, Trivy misconfigurations); a rule's input. */
export interface CheckTable {
  tenant_id: string;
  asset_id: string;
  /** The scanner (`prowler`, `trivy`), whose next report on the asset replaces its checks. */
  source: string;
  check_id: string;
  severity_level_value: number;
  first_observed_at: string;
  last_observed_at: string;
  /** The FailedCheck (src/domain/checks.ts) as JSON. */
  doc: string;
}

export interface ApiKeyTable {
  id: string;
  tenant_id: string;
  name: string | null;
  /** The first characters of the key, shown in listings so a user can tell keys apart. */
  prefix: string;
  /** SHA-256 of the whole key, hex. The key itself is never stored. */
  key_hash: string;
  created_at: string;
  expires_at: string | null;
  revoked_at: string | null;
  last_used_at: string | null;
  /** What the key may do, comma-separated in src/domain/scopes.ts's order (`read`, `ingest`). */
  scopes: Generated<string>;
}

/** A tenant's scans, uploaded or ingested (pipeline.md §2); JSON columns hold the record's objects as text. */
export interface ScanTable {
  tenant_id: string;
  id: string;
  status: string;
  name: string | null;
  format: string | null;
  options: string;
  size_bytes: number;
  sha256: string;
  key_id: string | null;
  idempotency_key: string | null;
  /** SHA-256 of the body's digest and the options: an idempotent retry must match it. */
  request_hash: string | null;
  submitted_at: string;
  started_at: string | null;
  finished_at: string | null;
  summary: string | null;
  gate: string | null;
  problems: string;
}

/** Global: the scans not yet ended, in acceptance order (`seq`), and who holds each (src/storage/scans/queue.ts). */
export interface ScanQueueTable {
  seq: Generated<number>;
  tenant_id: string;
  scan_id: string;
  owner: string | null;
  claimed_until: string | null;
  attempts: number;
}

/** PostgreSQL: an uploaded body in pieces until its scan ends (SQLite spools bodies to files). */
export interface ScanBodyTable {
  tenant_id: string;
  scan_id: string;
  part: number;
  bytes: Uint8Array;
}

/** Global: per-database secrets (the key that signs list cursors). */
export interface ServerSecretTable {
  name: string;
  value: string;
}

/** A tenant's change log (pipeline.md §4); JSON columns hold the change's objects as text. */
export interface ChangeTable {
  tenant_id: string;
  seq: number;
  at: string;
  type: string;
  asset_id: string | null;
  vulnerability_id: string | null;
  risk_id: string | null;
  /** The scan of the cause, when it is one: a scan's diff is read by it. */
  scan_id: string | null;
  cause: string;
  /** The tracked state before and after (src/storage/changes/states.ts): the change's `fields` are read from them. */
  before: string | null;
  after: string | null;
  /** The record as it left, for the changes that remove one; otherwise read from the record itself. */
  record: string | null;
}

/** While a write runs: the tracked state of each record it is about to change (src/storage/changes/capture.ts). */
export interface ChangeCaptureTable {
  tenant_id: string;
  /** `asset`, `finding` or `risk`. */
  kind: string;
  /** The asset, or the finding's asset; '' for a risk. */
  asset_id: string;
  /** The finding's vulnerability id, the risk's id; '' for an asset. */
  item: string;
  /** The tracked state before the write (src/storage/changes/states.ts); null: a mark that the write may create it. */
  state: string | null;
  /** A risk's lifecycle state before the write. */
  lifecycle: string | null;
  primary_asset_id: string | null;
  first_observed_at: string | null;
  record: string | null;
  /** A finding's severity value, due date and exemption before the write, for the remediation rollup. */
  severity_value: number | null;
  due_at: string | null;
  exempted: number | null;
}

/**
 * The remediation rollup, per tenant, UTC day and severity value (src/storage/changes/rollup.ts): findings opened and
 * resolved that day, and the changes that day of the open count and of the overdue count at the day's end.
 */
export interface FindingDayTable {
  tenant_id: string;
  day: string;
  severity: number;
  opened: number;
  resolved: number;
  open_delta: number;
  overdue_delta: number;
}

/** The resolutions of a day by severity, whole days from first observation to resolution, and within the SLA (1, 0; -1: no SLA). */
export interface FindingFixTable {
  tenant_id: string;
  day: string;
  severity: number;
  fix_days: number;
  within: number;
  count: number;
}

/** finding_fixes summed by month (`YYYY-MM`): a range reads its whole months here, its other days there. */
export interface FindingFixMonthTable extends Omit<FindingFixTable, 'day'> {
  month: string;
}

/** A resolved finding's first observation, kept so that it reopens with it. */
export interface ResolvedFindingTable {
  tenant_id: string;
  asset_id: string;
  vulnerability_id: string;
  first_observed_at: string;
  resolved_at: string;
}

/**
 * Global: a webhook endpoint (pipeline.md §5) with its delivery state and claim (src/storage/webhooks/); it names its
 * tenant. The API role cannot read it.
 */
export interface WebhookTable {
  id: string;
  tenant_id: string;
  url: string;
  description: string | null;
  /** Change types, comma-separated; null: every type. */
  types: string | null;
  min_severity: string | null;
  kev: number;
  exploit: number;
  /** The signing secret sealed under the database's webhook key (src/storage/webhooks/secrets.ts). */
  secret: string;
  created_at: string;
  enabled: number;
  disabled_at: string | null;
  disabled_reason: string | null;
  /** The tenant's log position through which changes were delivered or passed over by the filters. */
  delivered_seq: number;
  /** The last position of the batch being tried, fixed once formed; null: none. */
  batch_through: number | null;
  failures: number;
  failing_since: string | null;
  next_attempt_at: string | null;
  owner: string | null;
  claimed_until: string | null;
  /** The number of the endpoint's last attempt. */
  attempt_seq: number;
}

/** An endpoint's recent attempts, the last 100 kept. */
export interface WebhookAttemptTable {
  tenant_id: string;
  webhook_id: string;
  seq: number;
  at: string;
  delivery_id: string;
  kind: string;
  changes: number;
  status: number | null;
  duration_ms: number;
  error: string | null;
}

export interface Database {
  tenants: TenantTable;
  environments: EnvironmentTable;
  integrations: IntegrationTable;
  asset_groups: AssetGroupTable;
  asset_group_members: AssetGroupMemberTable;
  exemptions: ExemptionTable;
  assets: AssetTable;
  asset_documents: AssetDocumentTable;
  vulnerabilities: VulnerabilityTable;
  vulnerability_documents: VulnerabilityDocumentTable;
  vulnerability_packages: VulnerabilityPackageTable;
  vulnerability_exemptions: VulnerabilityExemptionTable;
  vulnerability_aliases: VulnerabilityAliasTable;
  vex_statements: VexStatementTable;
  feeds: FeedTable;
  feed_kev: FeedKevTable;
  feed_exploits: FeedExploitTable;
  feed_epss: FeedEpssTable;
  risks: RiskTable;
  risk_states: RiskStateTable;
  checks: CheckTable;
  api_keys: ApiKeyTable;
  server_secrets: ServerSecretTable;
  changes: ChangeTable;
  change_captures: ChangeCaptureTable;
  resolved_findings: ResolvedFindingTable;
  finding_days: FindingDayTable;
  finding_fixes: FindingFixTable;
  finding_fix_months: FindingFixMonthTable;
  scans: ScanTable;
  scan_queue: ScanQueueTable;
  scan_bodies: ScanBodyTable;
  webhooks: WebhookTable;
  webhook_attempts: WebhookAttemptTable;
}

/**
 * Every table that holds one tenant's records. `tenants`, `api_keys`, `server_secrets`, the feeds, `scan_queue` and
 * `webhooks` are global.
 */
export const TENANT_TABLES = [
  'environments',
  'integrations',
  'asset_groups',
  'asset_group_members',
  'exemptions',
  'assets',
  'asset_documents',
  'vulnerabilities',
  'vulnerability_documents',
  'vulnerability_packages',
  'vulnerability_exemptions',
  'vulnerability_aliases',
  'vex_statements',
  'risks',
  'risk_states',
  'checks',
  'scans',
  'scan_bodies',
  'changes',
  'change_captures',
  'resolved_findings',
  'webhook_attempts',
  'finding_days',
  'finding_fixes',
  'finding_fix_months',
] as const satisfies readonly (keyof Database)[];
