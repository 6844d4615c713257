// The storage interface: every operation the API, the importer and the CLI may ask of a database. One implementation
// (src/storage/index.ts) serves SQLite and PostgreSQL through Kysely; nothing outside src/storage/ sees SQL.
//
// Tenant data is reached only through a TenantScope (API reads) or a record that names its tenant (import), so no
// operation can read or write tenant rows without naming the tenant. Keys are the exception by nature: a request is
// authenticated by its key's hash before its tenant is known, and the CLI revokes a key by its id.
import type { ListAssetsQuery } from '../domain/assets.js';
import type { CheckResults } from '../domain/checks.js';
import type { LifecycleState } from '../domain/enums.js';
import type { FeedData, FeedLoad, FeedStatus } from '../domain/intel.js';
import type { VexDocument } from '../domain/vex.js';
import type { ImportKind, RecordsByKind, StoredAsset, VulnerabilityRecord } from '../domain/records.js';
import type {
  AcceptedScan,
  ClaimedScan,
  NewScan,
  ScanGate,
  ScanListQuery,
  ScanOutcome,
  ScanPosition,
  ScanProblem,
  ScanRecord,
} from '../domain/scans.js';
import type { Scope } from '../domain/scopes.js';
import type { ChangeCause, ChangeType } from '../domain/changes.js';
import type { ListRisksQuery } from '../domain/risks.js';
import type { ListVulnerabilitiesQuery } from '../domain/vulnerabilities.js';
import type { FindingInterval, RemediationMetrics } from '../domain/metrics.js';
import type { MetricInterval, Sla } from '../domain/remediation.js';
import type { NewWebhook, WebhookAttempt, WebhookEndpoint } from '../domain/webhooks.js';

export type Dialect = 'sqlite' | 'postgres';

/**
 * What a bulk write waits for: on PostgreSQL its turn with the feed loads, or with another write to the same tenant; on
 * SQLite, which has one writer at a time, another process's write to the database.
 */
export type WaitReason = 'feeds' | 'tenant' | 'database';

/** What a run of the expiry runner did (Storage.expireDue). */
export interface ExpiryRun {
  /** Tenants whose expiries were due and done by this run. */
  tenants: number;
  /** Dismissed risks reopened. */
  reopened: number;
  /** Assets whose findings lost an exemption that expired. */
  assets: number;
}

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

/**
 * The steps of a feed load as each starts (Storage.loadFeeds): storing the feeds once the load has its turn, then per
 * tenant re-enriching its findings and deriving its risks, the commit, the statistics; `done` at the end.
 */
export type FeedLoadPhase = 'storing' | 'enriching' | 'deriving' | 'committing' | 'analyzing' | 'done';

/** The days of a metric range (`YYYY-MM-DD`, UTC, both included) and today's. */
export interface MetricRange {
  from: string;
  to: string;
  /** An interval not over counts its overdue findings as of the end of today. */
  today: string;
}

/** Which tenant a request acts for, and the version of its data (bumped by every import that touches it). */
export interface TenantScope {
  tenantId: string;
  dataVersion: number;
}

/** A page of a numbered list: each item is the API object's JSON, ready to splice into the response. */
export interface Page {
  items: Buffer[];
  /** How many records match the filters, over all pages. */
  total: number;
  /** The tenant's change-log position in the snapshot the page was read from (see Snapshot). */
  position: number;
}

/** Where a risk batch starts: after the item with this sort value and id. */
export type RiskPosition = readonly [string | number, string];

/** Where a batch of findings starts: after the finding with this sort value, asset id and vulnerability id. */
export type FindingPosition = readonly [string | number, string, string];

/** Where a batch of assets starts: after the asset with this sort value (null: none, the nulls-last segment) and id. */
export type AssetPosition = readonly [string | number | null, string];

/** A batch of a keyset list: the items, and where the next batch starts (null on the last). */
export interface Batch<P> {
  items: Buffer[];
  next: P | null;
}

export interface TenantInfo {
  tenantId: string;
  organizationId: string;
  name: string | null;
}

/** A tenant and how much it holds. */
export interface TenantSummary extends TenantInfo {
  assets: number;
  findings: number;
  risks: number;
  keys: number;
}

/** A key as listings show it: never the key or its hash. */
export interface KeyInfo {
  id: string;
  name: string | null;
  prefix: string;
  createdAt: string;
  expiresAt: string | null;
  revokedAt: string | null;
  lastUsedAt: string | null;
  scopes: Scope[];
}

export interface NewKey {
  id: string;
  tenantId: string;
  name: string | null;
  prefix: string;
  keyHash: string;
  createdAt: string;
  expiresAt: string | null;
  /** Default: `read`. */
  scopes?: readonly Scope[] | undefined;
}

/** The key a request presented, its tenant and that tenant's data version. */
export interface AuthenticatedKey {
  keyId: string;
  tenantId: string;
  dataVersion: number;
  expiresAt: string | null;
  revokedAt: string | null;
  lastUsedAt: string | null;
  scopes: Scope[];
}

// The scan's shapes, for the storage's users as for the storage.
export type * from '../domain/scans.js';

/** What recording a scan's checks did: failures new, changed and listed again as stored, and failures resolved. */
export interface CheckCounts {
  added: number;
  updated: number;
  unchanged: number;
  resolved: number;
}

/** A stored finding's times and scanner, as a scan of its asset reads them. */
export interface StoredFindingTimes {
  firstObservedAt: string;
  lastObservedAt: string;
  source: string | null;
}

/** Which changes a page of the log holds (pipeline.md §4); `scanId` selects one scan's. */
export interface ChangeQuery {
  types?: readonly ChangeType[] | undefined;
  assetIds?: readonly string[] | undefined;
  vulnerabilityIds?: readonly string[] | undefined;
  riskIds?: readonly string[] | undefined;
  since?: string | undefined;
  scanId?: string | undefined;
  perPage: number;
}

/**
 * Reads of one snapshot of a tenant's data: every call sees the same committed state, whatever commits meanwhile, and
 * `position` is the change-log position of that state, so that following the log from it misses nothing and repeats
 * nothing (pipeline.md §4). An export reads its batches through one; `close` ends it (after the last batch, or when
 * the client went away) and must be called once.
 */
export interface Snapshot {
  readonly position: number;
  listAssetBatch(query: ListAssetsQuery, size: number, after: AssetPosition | undefined): Promise<Batch<AssetPosition>>;
  listRisks(query: ListRisksQuery, after: RiskPosition | undefined): Promise<Page & { next: RiskPosition | null }>;
  listVulnerabilities(
    query: ListVulnerabilitiesQuery,
    after: FindingPosition | undefined,
  ): Promise<Batch<FindingPosition> & { total?: number }>;
  listChanges(query: ChangeQuery, after: number | undefined): Promise<ChangePage>;
  close(): Promise<void>;
}

/** How retention deletes: rows per batch (1000), and whether to end between two batches (a server stopping). */
export interface PruneOptions {
  batch?: number;
  stopped?: () => boolean;
}

export interface ChangePage {
  /** The position asked for is older than what retention kept: the client must read everything again. */
  gone: boolean;
  /** Each change's API JSON, in log order. */
  items: Buffer[];
  /** Where the next page starts: after the last change returned, or the head of the log when it was reached. */
  position: number;
  /** The head of the log in the snapshot the page was read from: its `Secinv-Changes-Cursor`. */
  head: number;
}

/** What an import may do inside its transaction. */
export interface BulkWriter {
  /** Buffers a normalised record and writes it with others of its kind; a later record with the same identity wins. */
  write<K extends ImportKind>(kind: K, record: RecordsByKind[K]): Promise<void>;
  /**
   * Writes what is buffered and recomputes what depends on it: VEX matches, derived asset fields and, when the run
   * derives risks, the risks of every asset written since the last derivation. Returns what the derivation changed.
   * The run's end does it too, for what is left (src/storage/write/pipeline.ts).
   */
  derive(): Promise<RiskDerivation>;
  assetExists(tenantId: string, assetId: string): Promise<boolean>;
  /**
   * A scan's gate but its `added`, over the tenant's given assets as the run leaves them (what is buffered written
   * first): open, not exempted findings by severity, and how many of those are in KEV or have a public exploit.
   */
  openFindings(tenantId: string, assetIds: readonly string[]): Promise<Omit<ScanGate, 'added'>>;
  /** The ids of the tenant's exemptions as the run leaves them so far: a scan counts those it made and removed. */
  exemptionIds(tenantId: string): Promise<Set<string>>;
  /** Ends the scan this write applies (BulkWriteOptions.scan) `succeeded`, in the write's transaction. */
  endScan(outcome: ScanOutcome): Promise<void>;
  /** Records a scan that this write applied without a queue (`secinv ingest`), as given. */
  recordScan(scan: ScanRecord): Promise<void>;
  /** The organization a tenant belongs to; undefined for an unknown tenant. */
  tenantOrganization(tenantId: string): Promise<string | undefined>;
  /**
   * A stored asset as imported (without derived fields) and its raw data; undefined when the tenant has none. What the
   * run holds of the asset is written first, so a second report of it in one run builds on the first (so does
   * storedFindings).
   */
  storedAsset(
    tenantId: string,
    assetId: string,
  ): Promise<{ asset: StoredAsset; rawData: Record<string, unknown> } | undefined>;
  /** The asset's stored findings by vulnerability id: when each was first and last observed, which scanner reported it. */
  storedFindings(tenantId: string, assetId: string): Promise<Map<string, StoredFindingTimes>>;
  /** The asset's resolved findings' first observations, by vulnerability id: one reported again keeps it. */
  resolvedFindings(tenantId: string, assetId: string): Promise<Map<string, string>>;
  /**
   * Which of one asset's findings, about to be written, would leave what is stored as it is (src/storage/write/compare.ts).
   * Asked after storedFindings of the asset, which wrote what the run held of it.
   */
  unchangedFindings(tenantId: string, assetId: string, records: readonly VulnerabilityRecord[]): Promise<Set<string>>;
  /** Whether writing the asset again would leave it as it is; asked after storedAsset of the asset. */
  unchangedAsset(record: RecordsByKind['asset']): Promise<boolean>;
  /**
   * Resolves the asset's findings that `source` reported before and its new scan (`keep`) does not: they leave the
   * inventory. Returns how many did.
   */
  resolveFindings(tenantId: string, assetId: string, source: string, keep: ReadonlySet<string>): Promise<number>;
  /**
   * Records what a report says about an asset's configuration checks from `source`: failures are added or updated
   * (an updated one keeps its firstObservedAt), passed checks resolve earlier failures whatever `resolve` says (a
   * caller that must resolve nothing passes none), and a complete report with `resolve` also resolves the failures
   * it no longer lists. Returns the counts.
   */
  recordChecks(
    tenantId: string,
    assetId: string,
    results: CheckResults & { source: string; observedAt: string; resolve: boolean },
  ): Promise<CheckCounts>;
  /** Replaces a VEX document's statements in the tenant; its exemptions follow at the next re-match. */
  replaceVexDocument(tenantId: string, document: VexDocument): Promise<void>;
  /**
   * Makes the tenant's VEX exemptions agree with its statements and findings (also done by finish() for every tenant
   * written to); returns what each document's statements matched.
   */
  rematchVex(tenantId: string): Promise<Map<string, VexDocumentMatch>>;
}

/** What one VEX document's statements matched: statements, exempting ones, those matching no asset, exemptions. */
export interface VexDocumentMatch {
  statements: number;
  exempting: number;
  unmatched: number;
  exemptions: number;
}

export interface PoolStats {
  total: number;
  idle: number;
  waiting: number;
}

export interface BulkWriteOptions {
  dryRun: boolean;
  deriveRisksAt?: string | undefined;
  /**
   * Called at each point of the write after the work: `read`, `settled` (derived fields and risks written), `indexed`
   * (deferred indexes built; the commit is next), `committed`, `analyzed`. For fault tests (docs/RELIABILITY.md).
   */
  onPhase?: ((phase: string) => void) | undefined;
  /**
   * Called when the write waits for its turn: on PostgreSQL for a feed load that is running to commit (`feeds`) or for
   * another write to the same tenant (`tenant`, docs/DESIGN.md §87), on SQLite for another process's write
   * (`database`, §89).
   */
  onWait?: ((reason: WaitReason) => void) | undefined;
  /**
   * The queued scan this write applies: the write first checks that the claim is still this process's (and on
   * PostgreSQL locks its entry), and fails without writing otherwise; the work ends it with BulkWriter.endScan.
   */
  scan?: ClaimedScan | undefined;
  /** Why the write is made, for its changes; an applied or recorded scan names itself, and the default is `import`. */
  cause?: ChangeCause | undefined;
  /**
   * The write's clock, read at settle for the time of its changes and of the rollup's days (the commit's, as near as it
   * is known); the system's by default. An ingest at a set time (`IngestOptions.now`) passes its own.
   */
  clock?: (() => Date) | undefined;
  /**
   * Where the tables whose planner statistics the write left stale go: analysed at once after the commit by default
   * (the `analyzed` phase); a caller with more writes queued behind this one takes them, to analyse with
   * Storage.analyzeTables once those are done (docs/DESIGN.md §113).
   */
  staleStatistics?: StaleStatistics | undefined;
}

/** The tables whose statistics a caller takes later (BulkWriteOptions.staleStatistics). */
export interface StaleStatistics {
  /** Those already waiting for theirs: a write does not count their rows again (docs/DESIGN.md §119). */
  waiting: ReadonlySet<string>;
  /** Takes the tables a write left stale, the waiting ones among them. */
  add(tables: readonly string[]): void;
}

/** An endpoint this process claimed for a lease (Storage.claimWebhooks), with its secret opened to sign. */
export interface ClaimedWebhook {
  endpoint: WebhookEndpoint;
  secret: string;
  owner: string;
}

/** A batch of an endpoint's changes to send: those after `from` through `through` that its filters pass. */
export interface WebhookBatch {
  deliveryId: string;
  from: number;
  through: number;
  /** Each change's API JSON, in log order. */
  items: Buffer[];
  /** How often this batch failed so far, since when. */
  failures: number;
  failingSince: string | null;
}

export interface Storage {
  readonly dialect: Dialect;

  // API reads: each runs in the tenant of its scope (on PostgreSQL also under row-level security).
  listAssets(scope: TenantScope, query: ListAssetsQuery): Promise<Page>;
  /**
   * `size` assets of the list after `after` (the first without it), in the order of its numbered pages, and where the
   * batch after them starts (null: last). For exports; `page` and `perPage` of the query are not read.
   */
  listAssetBatch(
    scope: TenantScope,
    query: ListAssetsQuery,
    size: number,
    after: AssetPosition | undefined,
  ): Promise<Batch<AssetPosition>>;
  /** The asset's JSON (with `rawData` when asked), or undefined when the tenant has no asset with this id. */
  getAsset(scope: TenantScope, id: string, withRawData: boolean): Promise<Buffer | undefined>;
  /**
   * Opens a snapshot of the tenant's data for an export. Undefined when this process holds as many as it allows at once
   * (each holds a database connection until closed).
   */
  openSnapshot(scope: TenantScope): Promise<Snapshot | undefined>;
  /** A page of the tenant's change log after position `after` (its start without one). */
  listChanges(scope: TenantScope, query: ChangeQuery, after: number | undefined): Promise<ChangePage>;
  /** One batch after `after` (or the first), the total under the filters, and where the next batch starts (null: last). */
  listRisks(
    scope: TenantScope,
    query: ListRisksQuery,
    after: RiskPosition | undefined,
  ): Promise<Page & { next: RiskPosition | null }>;
  /**
   * A page of findings: after `after` when given (a keyset batch), else the numbered page `query.page`; the total only
   * when asked (`includeTotal` and no `after`); and where the batch after it starts (null: last).
   */
  listVulnerabilities(
    scope: TenantScope,
    query: ListVulnerabilitiesQuery,
    after: FindingPosition | undefined,
  ): Promise<Batch<FindingPosition> & { total?: number; position: number }>;
  /** The purl a scanner gave each package of the asset's findings (by vulnerability id and position), where it gave one. */
  findingPurls(
    scope: TenantScope,
    assetId: string,
  ): Promise<{ vulnerabilityId: string; position: number; purl: string }[]>;

  // Tenants and keys. A write here waits for another process's write to a SQLite file, calling `onWait` first.
  listTenants(): Promise<TenantInfo[]>;
  /** Creates a tenant; false (and nothing changed) when one with this id exists. */
  createTenant(tenant: TenantInfo, onWait?: (reason: WaitReason) => void): Promise<boolean>;
  /** Every tenant with the number of its assets, findings, risks and keys. */
  tenantSummaries(): Promise<TenantSummary[]>;
  /** The organization a tenant belongs to; undefined for an unknown tenant. */
  tenantOrganization(tenantId: string): Promise<string | undefined>;
  insertKey(key: NewKey, onWait?: (reason: WaitReason) => void): Promise<void>;
  listKeys(tenantId: string): Promise<KeyInfo[]>;
  /** Revokes a key; false when no key has that id. Revoking twice keeps the first time. */
  revokeKey(id: string, at: string, onWait?: (reason: WaitReason) => void): Promise<boolean>;
  /** The key with this hash; undefined when no such key or its tenant does not exist. */
  findKeyByHash(keyHash: string): Promise<AuthenticatedKey | undefined>;
  /** The key with this id; undefined when no such key or its tenant does not exist. */
  findKeyById(id: string): Promise<AuthenticatedKey | undefined>;
  /**
   * Records a key's use. False, with nothing written, while another process's write holds the SQLite database: the
   * server does not wait for it (src/storage/db/journal.ts unlessLocked).
   */
  touchKey(id: string, at: string): Promise<boolean>;

  /**
   * Runs a bulk write (an import, an ingest, a scan) in one transaction: all of it is written, or (when `work` throws,
   * or on a dry run) none of it. Refreshes the planner's statistics after a write (src/storage/write/pipeline.ts).
   */
  bulkWrite<T>(work: (writer: BulkWriter) => Promise<T>, options: BulkWriteOptions): Promise<T>;
  /** Takes fresh planner statistics of these tables (those a bulk write handed to `staleStatistics`). */
  analyzeTables(tables: readonly string[]): Promise<void>;
  /** SQLite: copies the WAL's pages into the file (opened with `checkpointAtCommit: false`, nothing else does). */
  checkpoint(): Promise<void>;

  // Risks (docs/RISKS.md).
  /** Re-runs the risk rules over every asset of a tenant, in one transaction; undefined for an unknown tenant. */
  deriveRisks(tenantId: string, at: string, onWait?: (reason: WaitReason) => void): Promise<RiskDerivation | undefined>;
  /**
   * Sets a risk's lifecycle state, in one transaction that waits for the writes to the tenant and for a feed load, as a
   * derivation does; false (and nothing changed) when the tenant has no such risk. A dismissal with `until` (a
   * timestamp in the output format) reopens by itself then (expireDue); any other state set clears it.
   */
  setRiskLifecycle(
    tenantId: string,
    riskId: string,
    state: LifecycleState,
    at: string,
    onWait?: (reason: WaitReason) => void,
    until?: string | null,
  ): Promise<boolean>;
  /**
   * Runs what expired by `now` (pipeline.md §6): for each tenant whose earliest expiry is due, in one write that takes
   * the tenant's turn, reopens the dismissals whose `until` passed and lifts the exemptions whose `expiresAt` passed
   * (their findings, assets and risks derived again), appending the changes with cause `expiry`. Safe beside the same
   * run in another process: each tenant's expiries are done once. `onWait` is called when a write holds the tenant.
   */
  expireDue(now: Date, onWait?: (reason: WaitReason) => void): Promise<ExpiryRun>;

  // Remediation (pipeline.md §6).
  /** The tenant's SLA (the defaults unless set); undefined for an unknown tenant. */
  tenantSla(tenantId: string): Promise<Sla | undefined>;
  /**
   * Sets the tenant's SLA and moves the due dates of its findings by it, in one write; undefined (and nothing
   * changed) for an unknown tenant.
   */
  setTenantSla(
    tenantId: string,
    sla: Sla,
    at: string,
    onWait?: (reason: WaitReason) => void,
  ): Promise<{ moved: number } | undefined>;
  /** Open, opened, resolved and overdue findings of each interval that meets the range, by severity. */
  findingMetrics(scope: TenantScope, range: MetricRange, interval: MetricInterval): Promise<FindingInterval[]>;
  /** Resolutions in the range by severity: how many, days to fix, share within the SLA. */
  remediationMetrics(scope: TenantScope, range: MetricRange): Promise<RemediationMetrics['data']>;
  /** The latest due date at or before `now` and the earliest after it, of the findings not exempted. */
  dueBoundaries(scope: TenantScope, now: string): Promise<{ last: string | null; next: string | null }>;

  // Threat-intel feeds, shared by every tenant.
  /**
   * Replaces each given feed (by difference) and re-enriches the findings of every tenant whose id or alias is among
   * the CVEs that changed, with their assets' derived fields, in one transaction. `check` sees the loaded feeds first,
   * inside it, after the loads of other connections before it have committed (feed loads take turns); what it throws
   * rolls everything back. On PostgreSQL a load also waits for the imports, ingests and derivations that are running,
   * and they for it (docs/DESIGN.md §87); `onWait` is called when it has to. `onPhase` is called as each step starts.
   */
  loadFeeds(
    feeds: readonly FeedData[],
    at: string,
    check?: (loaded: FeedStatus[]) => void | Promise<void>,
    onWait?: (reason: WaitReason) => void,
    onPhase?: (phase: FeedLoadPhase) => void,
  ): Promise<FeedLoad>;
  /** Every loaded feed: version, entries, when and from where. */
  feedStatus(): Promise<FeedStatus[]>;

  // The server.
  /** The per-database key that signs list cursors: every process of one database accepts the others' cursors. */
  cursorKey(): Promise<Buffer>;
  // Scans (pipeline.md §2): accepted by the API role, applied by a server's scan runner.
  /**
   * Stores an upload's bytes and queues its scan, all or nothing; `measured` gives the bytes' size and digests once
   * they are all read. An idempotency key within a day answers the scan it created (same upload) or a conflict.
   */
  acceptScan(
    scan: NewScan,
    body: AsyncIterable<Buffer>,
    measured: () => { sizeBytes: number; sha256: string; requestHash: string },
  ): Promise<AcceptedScan>;
  /** One scan of the tenant; with `keyId`, only one that key uploaded. */
  getScan(scope: TenantScope, id: string, keyId?: string): Promise<ScanRecord | undefined>;
  listScans(
    scope: TenantScope,
    query: ScanListQuery,
    after: ScanPosition | undefined,
    keyId?: string,
  ): Promise<{ items: ScanRecord[]; next: ScanPosition | null }>;
  /**
   * Writes scans that ended outside a bulk write, as given (a refused `secinv ingest` run, after its write rolled
   * back), in one transaction that waits its turn as a command's small writes do.
   */
  recordScans(scans: readonly ScanRecord[], onWait?: (reason: WaitReason) => void): Promise<void>;
  /** Takes the next scan that may run (the oldest unfinished of its tenant, unclaimed or its claim expired). */
  claimScan(owner: string, now: Date, leaseMs: number): Promise<ClaimedScan | undefined>;
  /** A claimed scan's bytes. */
  scanBody(claim: ClaimedScan): AsyncIterable<Buffer>;
  /** Ends a claimed scan `failed`; false when the claim was lost (another process holds the scan). */
  failScan(claim: ClaimedScan, problems: ScanProblem[], at: string): Promise<boolean>;
  /** After the write that applied a scan committed: frees what held its bytes. */
  scanApplied(claim: ClaimedScan): void;
  /**
   * Deletes the scans that ended (succeeded or failed) before `cutoff`, tenant by tenant, `batch` (default 1000) per
   * statement and transaction, until `stopped` says so between two; how many it deleted. Safe beside another process
   * doing the same.
   */
  pruneScans(cutoff: string, options?: PruneOptions): Promise<number>;
  /**
   * Deletes the changes committed before `cutoff`, each tenant's oldest first, `batch` (default 1000) per transaction,
   * until `stopped` says so between two, and raises each tenant's pruned position with them (a cursor before it is
   * gone); how many it deleted. Safe beside the writes appending changes and another process doing the same.
   */
  pruneChanges(cutoff: string, options?: PruneOptions): Promise<number>;
  /** Frees the bytes no scan will read, left by a process that died (SQLite's spool); how many were freed. */
  sweepScanBodies(now: Date): Promise<number>;

  // Webhooks (pipeline.md §5, docs/DESIGN.md §104). The commands' writes wait their turn as a key's do.
  /** Stores an endpoint (its secret sealed), at its tenant's head: it is sent the changes after it. */
  createWebhook(hook: NewWebhook, onWait?: (reason: WaitReason) => void): Promise<WebhookEndpoint>;
  /** Every endpoint, or the tenant's. */
  listWebhooks(tenantId: string | undefined): Promise<WebhookEndpoint[]>;
  getWebhook(id: string): Promise<WebhookEndpoint | undefined>;
  /** The endpoint's signing secret, opened: for the process that signs. */
  webhookSecret(id: string): Promise<string | undefined>;
  /** Disables (with the reason) or enables an endpoint; false when none has that id. */
  setWebhookEnabled(
    id: string,
    enabled: boolean,
    at: string,
    reason: string | null,
    onWait?: (reason: WaitReason) => void,
  ): Promise<boolean>;
  /** Deletes an endpoint and its attempts; false when none has that id. */
  deleteWebhook(id: string, onWait?: (reason: WaitReason) => void): Promise<boolean>;
  /** The endpoint's most recent attempts, newest first. */
  webhookAttempts(id: string, limit: number): Promise<WebhookAttempt[]>;
  /** Records an attempt outside a delivery (a ping). */
  recordWebhookAttempt(
    endpoint: { id: string; tenantId: string },
    attempt: WebhookAttempt,
    onWait?: (reason: WaitReason) => void,
  ): Promise<void>;
  /**
   * Claims for `leaseMs` up to `limit` enabled endpoints that have something to send now (changes after their
   * position, or a batch due for its retry) and that no live claim holds.
   */
  claimWebhooks(owner: string, now: Date, leaseMs: number, limit: number): Promise<ClaimedWebhook[]>;
  /**
   * The claimed endpoint's batch to send, renewing the lease: the one being tried, or the next, formed from the changes
   * after its position that its filters pass (at most `maxChanges`, their JSON at most `maxBytes`) and fixed before it
   * is returned. `idle`: nothing to send (the claim released when the endpoint was disabled meanwhile); `lost`: the
   * claim is no longer this process's.
   */
  webhookBatch(
    claim: ClaimedWebhook,
    limits: { maxChanges: number; maxBytes: number },
    now: Date,
    leaseMs: number,
  ): Promise<WebhookBatch | 'idle' | 'lost'>;
  /** The batch was received: records the attempt, moves the position past it, renews the lease; false when lost. */
  webhookDelivered(
    claim: ClaimedWebhook,
    batch: WebhookBatch,
    attempt: WebhookAttempt,
    now: Date,
    leaseMs: number,
  ): Promise<boolean>;
  /** The batch failed: records the attempt and the retry, or disables the endpoint; releases the claim. */
  webhookFailed(
    claim: ClaimedWebhook,
    batch: WebhookBatch,
    attempt: WebhookAttempt,
    outcome: { retryAt: string } | { disable: string },
  ): Promise<boolean>;
  /** Gives the claim up (nothing left to send, or the server stopping). */
  releaseWebhook(claim: ClaimedWebhook): Promise<void>;

  /** Throws when the database cannot answer (readiness). */
  ping(): Promise<void>;
  /** Connections of the PostgreSQL pool; undefined on SQLite, which has one embedded connection. */
  poolStats(): PoolStats | undefined;
  close(): Promise<void>;
}
