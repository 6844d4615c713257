// A scan becomes inventory records inside the ingest transaction: the asset it is about (created, or updated with the
// scan's fields only), its findings (firstObservedAt kept from earlier scans), its failed configuration checks, and the
// resolution of what the same scanner reported before and no longer does (docs/INGEST.md, "Re-scans").
import { noSeverities, severityOfLevel, type SeverityCounts } from '../domain/scans.js';
import { secretCounts } from '../domain/derived.js';
import { UserError } from '../domain/errors.js';
import type { Provider } from '../domain/enums.js';
import type { StoredAsset, VulnerabilityRecord } from '../domain/records.js';
import { IMAGE_TYPES, registryLocation, scannedAssetId, serviceOf } from '../domain/scan.js';
import type { CheckCounts, BulkWriter } from '../storage/index.js';
import { findingRecord, validated, type FindingContext } from './finding-record.js';
import { preparedInThread } from './prepare-thread.js';
import type { Scan, ScanSecret } from './scan.js';

export interface ApplyOptions {
  tenantId: string;
  organizationId: string;
  /** Attach the scan to this existing asset. */
  assetId?: string | undefined;
  /** Where an image lives when its registry does not say. */
  provider?: Provider | undefined;
  region?: string | undefined;
  integrationId?: string | undefined;
  /** Add and update findings, resolve none (partial scans). */
  resolve: boolean;
  /** When the report does not say when it ran. */
  now: string;
}

export interface ApplyResult {
  assetId: string;
  assetCreated: boolean;
  /** The asset was stored already, and the scan leaves it as it was (the same report again). */
  assetUnchanged: boolean;
  added: number;
  /** The findings added, by severity (a scan's gate). */
  addedBySeverity: SeverityCounts;
  updated: number;
  /** Stored findings the scan lists again as they are stored: not written. */
  unchanged: number;
  resolved: number;
  /** Failed checks the scan lists on the asset (one per check id), how many of them are new, and how many earlier failures it resolved. */
  checksFailed: number;
  checksAdded: number;
  checksResolved: number;
}

/** Findings observed at the scan's own time compared with the stored ones per batch. */
const COMPARED_PER_BATCH = 500;

const SECRET_LEVELS = { CRITICAL: 'criticalSecrets', HIGH: 'highSecrets', MEDIUM: 'mediumSecrets' } as const;
const secretArrays = (secrets: readonly ScanSecret[]) => {
  const arrays = {
    lowSecrets: [] as Record<string, unknown>[],
    mediumSecrets: [] as Record<string, unknown>[],
    highSecrets: [] as Record<string, unknown>[],
    criticalSecrets: [] as Record<string, unknown>[],
  };
  // A secret rated below LOW, or not rated, is still a secret: it counts as LOW.
  for (const s of secrets)
    arrays[SECRET_LEVELS[s.severity as keyof typeof SECRET_LEVELS] ?? 'lowSecrets'].push(s.entry);
  return arrays;
};

/** Where the scanned asset is: the given one, or an image asset whose id follows from the image and its registry. */
function locate(
  scan: Scan,
  options: ApplyOptions,
): { id: string; provider: Provider; type: string; region: string | null; accountId: string | null } | null {
  if (scan.artifact.kind === 'resource') {
    if (options.assetId !== undefined)
      throw new UserError('this report names its own assets (one per resource): --asset does not apply to it');
    const { type, region, resourceId, provider, accountId } = scan.artifact;
    return {
      id: scannedAssetId({ tenantId: options.tenantId, type, region, resourceId }),
      provider,
      type,
      region,
      accountId: accountId ?? null,
    };
  }
  if (options.assetId !== undefined || scan.artifact.kind !== 'image') return null;
  const location = registryLocation(scan.artifact.reference);
  const provider = location?.provider ?? options.provider;
  if (provider === undefined) {
    throw new UserError(
      `the image ${scan.artifact.reference} is not on a registry that names its cloud: give --provider (and --region), or --asset`,
    );
  }
  const region = location?.region ?? options.region ?? null;
  const type = IMAGE_TYPES[provider];
  return {
    id: scannedAssetId({ tenantId: options.tenantId, type, region, resourceId: scan.artifact.resourceId }),
    provider,
    type,
    region,
    accountId: location?.accountId ?? null,
  };
}

export async function applyScan(
  writer: BulkWriter,
  scan: Scan,
  digest: string,
  options: ApplyOptions,
): Promise<ApplyResult> {
  const located = locate(scan, options);
  const assetId = located?.id ?? options.assetId;
  if (assetId === undefined) {
    const what = scan.artifact.kind === 'other' ? scan.artifact.description : 'a scan';
    throw new UserError(`this is ${what}, which names no asset: give --asset ASSET_ID`);
  }
  const stored = await writer.storedAsset(options.tenantId, assetId);
  if (!located && !stored) throw new UserError(`--asset: tenant ${options.tenantId} has no asset '${assetId}'`);
  // The same report again changes nothing: without a time of its own it keeps the time it was first ingested at.
  const previous = (
    stored?.rawData.secinvScans as Record<string, { reportDigest?: string; scannedAt?: string }> | undefined
  )?.[scan.scanner];
  const scannedAt =
    scan.scannedAt ?? (previous?.reportDigest === digest && previous.scannedAt ? previous.scannedAt : options.now);
  const executionId = Date.parse(scannedAt);
  const covers = scan.covers ?? { findings: true, secrets: true };
  const secrets =
    covers.secrets || stored === undefined
      ? secretArrays(scan.secrets)
      : {
          lowSecrets: stored.asset.lowSecrets,
          mediumSecrets: stored.asset.mediumSecrets,
          highSecrets: stored.asset.highSecrets,
          criticalSecrets: stored.asset.criticalSecrets,
        };
  const scans = {
    ...((stored?.rawData.secinvScans as object | undefined) ?? {}),
    [scan.scanner]: { reportDigest: digest, scannedAt },
  };

  let asset: StoredAsset;
  let rawData: Record<string, unknown>;
  if (located && scan.artifact.kind !== 'other') {
    const artifact = scan.artifact;
    const image = artifact.kind === 'image' ? artifact : null;
    rawData = { ...artifact.rawData, secinvScans: scans };
    asset = validated(
      'asset',
      {
        tenantId: options.tenantId,
        organizationId: options.organizationId,
        id: assetId,
        integrationId: options.integrationId ?? stored?.asset.integrationId ?? null,
        executionId,
        provider: located.provider,
        type: located.type,
        service: serviceOf(located.type),
        resourceType: located.type,
        region: located.region,
        name: image?.reference ?? (artifact.kind === 'resource' ? artifact.name : null),
        resourceId: artifact.resourceId,
        resourceName: image ? image.resourceName : artifact.kind === 'resource' ? artifact.name : null,
        imageId: image?.imageId ?? null,
        platform: image?.operatingSystem?.platform ?? null,
        operatingSystem: image?.operatingSystem ? [image.operatingSystem] : [],
        providerAccountId: located.accountId === null ? null : Number(located.accountId),
        firstObservedAt: stored?.asset.firstObservedAt ?? scannedAt,
        lastObservedAt: scannedAt,
        lastScannedAt: scannedAt,
        tags: artifact.kind === 'resource' && artifact.tags?.length ? artifact.tags : (stored?.asset.tags ?? []),
        riskScore: stored?.asset.riskScore ?? null,
        ...secrets,
        rawData,
      },
      `the scanned ${artifact.kind === 'image' ? 'image' : 'resource'}`,
    ).asset;
  } else {
    // An existing asset keeps everything but what a scan observes.
    const current = stored as NonNullable<typeof stored>;
    rawData = { ...current.rawData, secinvScans: scans };
    asset = {
      ...current.asset,
      // Not observed but told: the run's --integration, when given, is the asset's as on a scanned image's.
      integrationId: options.integrationId ?? current.asset.integrationId,
      executionId,
      lastScannedAt: scannedAt,
      lastObservedAt: scannedAt > current.asset.lastObservedAt ? scannedAt : current.asset.lastObservedAt,
      ...secrets,
      ...secretCounts(secrets),
    };
  }
  const assetRecord = { tenantId: options.tenantId, asset, rawData };
  const assetUnchanged = stored !== undefined && (await writer.unchangedAsset(assetRecord));
  if (!assetUnchanged) await writer.write('asset', assetRecord);

  const before = await writer.storedFindings(options.tenantId, assetId);
  // A finding resolved earlier and reported again keeps the time it was first observed (pipeline.md §4).
  const resolvedBefore = await writer.resolvedFindings(options.tenantId, assetId);
  const firstObserved = (id: string): string | undefined => before.get(id)?.firstObservedAt ?? resolvedBefore.get(id);
  let added = 0;
  const addedBySeverity = noSeverities();
  let updated = 0;
  let unchanged = 0;
  // A stored finding last observed at another time than this scan's is changed by it (its lastObservedAt moves): only
  // those observed at this very time (the same report again, or one with the same time) are compared with what is
  // stored, a batch at a time, and written only if they differ: a re-scan from a new report compares nothing.
  let same: VulnerabilityRecord[] = [];
  const compare = async () => {
    const batch = same;
    same = [];
    if (batch.length === 0) return;
    const kept = await writer.unchangedFindings(options.tenantId, assetId, batch);
    for (const record of batch) {
      if (kept.has(record.vulnerability.vulnerabilityId)) unchanged += 1;
      else {
        updated += 1;
        await writer.write('vulnerability', record);
      }
    }
  };
  const write = async (record: VulnerabilityRecord) => {
    const found = before.get(record.vulnerability.vulnerabilityId);
    if (found === undefined) {
      added += 1;
      addedBySeverity[severityOfLevel(record.vulnerability.severityLevelValue)] += 1;
    } else if (found.lastObservedAt === record.vulnerability.lastObservedAt) {
      same.push(record);
      if (same.length >= COMPARED_PER_BATCH) await compare();
      return;
    } else updated += 1;
    await writer.write('vulnerability', record);
  };
  const context: FindingContext = {
    tenantId: options.tenantId,
    organizationId: options.organizationId,
    assetId,
    integrationId: asset.integrationId,
    executionId: scan.reportId ?? String(executionId),
    provider: asset.provider,
    assetType: asset.type,
    scanner: scan.scanner,
    scannedAt,
  };
  const spilled = scan.findings.spilled();
  if (spilled !== null) {
    const setup = { context, target: spilled.target };
    for await (const records of preparedInThread(spilled.entries, setup, firstObserved))
      for (const record of records) await write(record);
  } else {
    for (const finding of scan.findings.values())
      await write(findingRecord(finding, context, firstObserved(finding.vulnerabilityId)));
  }
  await compare();
  const resolved =
    options.resolve && covers.findings
      ? await writer.resolveFindings(options.tenantId, assetId, scan.scanner, new Set(scan.findings.keys()))
      : 0;
  const checks = await recordChecks(writer, scan, assetId, scannedAt, options);
  return {
    assetId,
    assetCreated: !stored,
    assetUnchanged,
    added,
    addedBySeverity,
    updated,
    unchanged,
    resolved,
    checksFailed: checks.added + checks.updated + checks.unchanged,
    checksAdded: checks.added,
    checksResolved: checks.resolved,
  };
}

/**
 * The scan's checks on the asset, under its scanner's name. `--no-resolve` resolves nothing, so a passed check is not
 * passed on then; a scan that can change nothing is not recorded.
 */
async function recordChecks(
  writer: BulkWriter,
  scan: Scan,
  assetId: string,
  observedAt: string,
  options: ApplyOptions,
): Promise<CheckCounts> {
  const { failed, complete } = scan.checks;
  const passed = options.resolve ? [...scan.checks.passed] : [];
  if (failed.size === 0 && passed.length === 0 && !(complete && options.resolve))
    return { added: 0, updated: 0, unchanged: 0, resolved: 0 };
  return writer.recordChecks(options.tenantId, assetId, {
    failed: [...failed.values()],
    passed,
    complete,
    source: scan.scanner,
    observedAt,
    resolve: options.resolve,
  });
}
