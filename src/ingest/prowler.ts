// Prowler's OCSF JSON (`prowler <provider> --output-formats json-ocsf`, v3 to v5): a JSON array of OCSF Detection
// Findings (class_uid 2004), each the result of one check on one or more resources. It becomes one scan per resource
// uid: a 'resource' asset of its cloud and the checks that failed or passed on it (docs/INGEST.md, "Prowler OCSF").
// Findings are streamed one by one; only each resource's scan (identity, first raw data, check results) is kept.
import type { FailedCheck } from '../domain/checks.js';
import type { Provider } from '../domain/enums.js';
import { mapSeverity } from '../domain/scan.js';
import { SHORT_KEY_BYTES } from '../domain/limits.js';
import { isObject, objects, overLimit, text, texts, timestamp, type Json } from '../input/json.js';
import { formatPath, streamJson } from '../input/stream.js';
import { kubernetesKindType } from './kubernetes.js';
import { addFailedCheck, findingSet, noChecks, type Ingested, type Scan } from './scan.js';
import type { FieldProblem } from './trivy.js';

export interface ProwlerOptions {
  /** Where resources are when neither the resource nor the finding's cloud says (a Kubernetes cluster). */
  region?: string | undefined;
  /** Findings of a scan kept as objects before the rest go to disk (src/ingest/scan.ts findingSet). */
  findingsInMemory?: number | undefined;
}

const PROVIDERS = new Map<string, Provider>([
  ['aws', 'AWS'],
  ['azure', 'Azure'],
  ['gcp', 'GCP'],
  ['kubernetes', 'Kubernetes'],
]);

/**
 * Prowler's resource types (AWS Security Hub's names on AWS, Prowler's own on Azure and Kubernetes) as the
 * contract's `Provider::Service::Type`, in the names AWS CloudFormation and Azure Resource Manager give them.
 */
const RESOURCE_TYPES = new Map<string, string>([
  ['AwsIamRole', 'AWS::IAM::Role'],
  ['AwsIamUser', 'AWS::IAM::User'],
  ['AwsIamGroup', 'AWS::IAM::Group'],
  ['AwsIamPolicy', 'AWS::IAM::Policy'],
  ['AwsIamAccessKey', 'AWS::IAM::AccessKey'],
  ['AwsS3Bucket', 'AWS::S3::Bucket'],
  ['AwsEc2Instance', 'AWS::EC2::Instance'],
  ['AwsEc2SecurityGroup', 'AWS::EC2::SecurityGroup'],
  ['AwsEc2Volume', 'AWS::EC2::Volume'],
  ['AwsEc2Vpc', 'AWS::EC2::VPC'],
  ['AwsEc2NetworkAcl', 'AWS::EC2::NetworkAcl'],
  ['AwsLambdaFunction', 'AWS::Lambda::Function'],
  ['AwsRdsDbInstance', 'AWS::RDS::DBInstance'],
  ['AwsRdsDbCluster', 'AWS::RDS::DBCluster'],
  ['AwsKmsKey', 'AWS::KMS::Key'],
  ['AwsCloudTrailTrail', 'AWS::CloudTrail::Trail'],
  ['AwsEksCluster', 'AWS::EKS::Cluster'],
  ['AwsDynamoDbTable', 'AWS::DynamoDB::Table'],
  ['AwsEcrRepository', 'AWS::ECR::Repository'],
  // Defender for Cloud's security contact and plans are ARM `Microsoft.Security/securityContacts` and `/pricings`.
  ['AzureEmailNotifications', 'Azure::Security::SecurityContact'],
  ['AzureDefenderPlan', 'Azure::Security::Pricing'],
  // Prowler checks the control plane's components in their pods (the resource uid is the pod's).
  ['KubernetesAPIServer', 'Kubernetes::Core::Pod'],
  ['KubernetesControllerManager', 'Kubernetes::Core::Pod'],
  ['KubernetesScheduler', 'Kubernetes::Core::Pod'],
  ['KubernetesEtcd', 'Kubernetes::Core::Pod'],
]);

const capitalised = (word: string): string => word.charAt(0).toUpperCase() + word.slice(1);
/** `storageAccounts` → `StorageAccount`, `policies` → `Policy`: ARM names collections, a type names one. */
const singular = (word: string): string =>
  capitalised(
    word
      .replace(/sses$/, 'ss')
      .replace(/ies$/, 'y')
      .replace(/(?<!s)s$/, ''),
  );
const alphanumeric = (word: string): string => word.replace(/[^A-Za-z0-9]/g, '');

/**
 * A Prowler resource type as `Provider::Service::Type`: from the table above; an ARM type
 * (`Microsoft.Insights/components` → `Azure::Insights::Component`); a Kubernetes kind as the Trivy reports name it;
 * else `<Provider>::<group.name, capitalised>::<type without its other characters>`.
 */
export function prowlerResourceType(provider: Provider, type: string | null, group: string | null): string {
  const known = type === null ? undefined : RESOURCE_TYPES.get(type);
  if (known !== undefined) return known;
  const arm = type === null ? null : /^Microsoft\.([A-Za-z0-9]+)\/([A-Za-z0-9]+)/i.exec(type);
  if (provider === 'Azure' && arm) return `Azure::${capitalised(arm[1] ?? '')}::${singular(arm[2] ?? '')}`;
  const kind = provider === 'Kubernetes' && type !== null ? kubernetesKindType(type) : null;
  if (kind !== null) return kind;
  const service = alphanumeric(group ?? '') || 'Other';
  return `${provider}::${capitalised(service)}::${alphanumeric(type ?? '') || 'Other'}`;
}

/**
 * A timestamp as Prowler writes it: epoch seconds (a number, or digits with `--unix-timestamp`), or RFC 3339 that
 * may lack its zone (`2025-02-14T14:27:38.533897`), read as UTC. Null when absent or not a time.
 */
export const epochOrUtcTimestamp = (v: unknown): string | null => {
  const seconds = typeof v === 'number' ? v : typeof v === 'string' && /^\d+(\.\d+)?$/.test(v) ? Number(v) : null;
  if (seconds !== null) {
    const ms = Math.trunc(seconds * 1000);
    // Beyond these the ISO text is not four-digit years, which would break text ordering.
    return Number.isFinite(ms) && ms >= 0 && ms < 253402300800000 ? new Date(ms).toISOString() : null;
  }
  const t = text(v);
  return timestamp(t !== null && /T\d{2}:\d{2}:\d{2}(\.\d+)?$/i.test(t) ? `${t}Z` : t);
};

/**
 * When the finding was made. Epoch seconds first (v5 `time`, `finding_info.created_time`): they are unambiguous, and
 * the `*_dt` texts beside them carry no zone and are the scanning machine's local time (the Azure sample's `time_dt`
 * is an hour off its `time`). Without epoch seconds (v4's `event_time`), a text without a zone is read as UTC.
 */
const findingTime = (finding: Json): string | null => {
  const info = isObject(finding.finding_info) ? finding.finding_info : {};
  const epoch = [finding.time, info.created_time].filter((v) => typeof v === 'number');
  const written = [finding.time_dt, info.created_time_dt, info.created_time, finding.event_time];
  for (const value of [...epoch, ...written]) {
    const time = epochOrUtcTimestamp(value);
    if (time !== null) return time;
  }
  return null;
};

/** OCSF severity_id, for a finding whose `severity` word is missing: 1 Informational … 5 Critical, 6 Fatal. */
const SEVERITY_IDS = ['UNKNOWN', 'INFORMATIONAL', 'LOW', 'MEDIUM', 'HIGH', 'CRITICAL', 'CRITICAL'] as const;

function failedCheck(finding: Json, checkId: string): FailedCheck {
  const info = isObject(finding.finding_info) ? finding.finding_info : {};
  const remediation = isObject(finding.remediation) ? finding.remediation : {};
  const unmapped = isObject(finding.unmapped) ? finding.unmapped : {};
  const word = mapSeverity(finding.severity);
  const id = typeof finding.severity_id === 'number' ? finding.severity_id : 0;
  // Prowler's references mix links with commands (`az monitor …`, `--enable-admission-plugins=…`): the commands are
  // remediation steps, so they join its text and the references stay links.
  const mentioned = [
    ...texts(remediation.references),
    ...texts([unmapped.related_url]),
    ...texts(unmapped.additional_urls),
  ];
  const links = mentioned.filter((r) => /^https?:\/\//i.test(r));
  const steps = [text(remediation.desc), ...mentioned.filter((r) => !links.includes(r))].filter((s) => s !== null);
  const risk = text(finding.risk_details);
  return {
    checkId,
    source: 'prowler',
    title: text(info.title),
    description: [text(info.desc), risk].filter((s) => s !== null).join('\n\n') || null,
    severity: word === 'UNKNOWN' ? (SEVERITY_IDS[id] ?? 'UNKNOWN') : word,
    remediation: [...new Set(steps)].join('\n') || null,
    references: [...new Set(links)],
    detail: text(finding.status_detail) ?? text(finding.message),
  };
}

/** Where the finding's resources are: its cloud's provider, or Kubernetes for Prowler's container profile. */
function providerOf(finding: Json): { provider: Provider } | { problem: string; path: string } {
  const cloud = isObject(finding.cloud) ? finding.cloud : null;
  const name = cloud === null ? null : text(cloud.provider);
  const provider = name === null ? undefined : PROVIDERS.get(name.toLowerCase());
  if (provider !== undefined) return { provider };
  const metadata = isObject(finding.metadata) ? finding.metadata : {};
  if (cloud === null && texts(metadata.profiles).includes('container')) return { provider: 'Kubernetes' };
  if (name === null)
    return { path: 'cloud.provider', problem: 'is required (aws, azure, gcp or kubernetes), or the container profile' };
  return {
    path: 'cloud.provider',
    problem: `is '${name}', a cloud secinv does not inventory (aws, azure, gcp, kubernetes)`,
  };
}

/**
 * The resource's tags, when the report gives them as objects: `{Key, Value}`, or OCSF's `{name, value}`. Prowler writes
 * `labels` as `key:value` texts, which stay in rawData: AWS keys hold colons too (`aws:cloudformation:stack-name`), so
 * no split of them is safe.
 */
const tagsOf = (resource: Json): { Key: string; Value: string | null }[] =>
  [...objects(resource.tags), ...objects(resource.labels)].flatMap((tag) => {
    const key = text(tag.Key) ?? text(tag.name);
    const value = tag.Value ?? tag.value;
    return key === null ? [] : [{ Key: key, Value: typeof value === 'string' ? value : null }];
  });

function resourceScan(finding: Json, resource: Json, uid: string, provider: Provider, options: ProwlerOptions): Scan {
  const cloud = isObject(finding.cloud) ? finding.cloud : {};
  const account = isObject(cloud.account) ? cloud.account : null;
  const org = isObject(cloud.org) ? cloud.org : null;
  const group = isObject(resource.group) ? text(resource.group.name) : null;
  const type = text(resource.type);
  const accountUid = account === null ? null : text(account.uid);
  return {
    scanner: 'prowler',
    artifact: {
      kind: 'resource',
      provider,
      type: prowlerResourceType(provider, type, group),
      region: text(resource.region) ?? text(cloud.region) ?? options.region ?? null,
      resourceId: uid,
      name: text(resource.name) ?? uid,
      // An AWS account id may start with 0: the number loses it, rawData keeps the text.
      accountId: accountUid !== null && /^\d+$/.test(accountUid) ? accountUid : null,
      tags: tagsOf(resource),
      rawData: {
        scanner: 'prowler',
        resourceType: type,
        service: group,
        namespace: text(resource.namespace),
        cloudPartition: text(resource.cloud_partition),
        labels: Array.isArray(resource.labels) ? resource.labels : [],
        data: resource.data ?? null,
        // A Kubernetes report has no cloud, so no account or organization.
        account: account && { uid: accountUid, name: text(account.name), type: text(account.type) },
        organization: org && { uid: text(org.uid), name: text(org.name) },
      },
    },
    scannedAt: null,
    reportId: null,
    findings: findingSet(options.findingsInMemory),
    secrets: [],
    // A Prowler run may cover a subset of its checks (`--checks`, `--services`): only a pass resolves a failure.
    checks: noChecks(false),
  };
}

const EMPTY_REPORT =
  'an empty Prowler OCSF report (no findings): it names no account, resource or check, so it adds and resolves nothing';

/** Reads Prowler OCSF JSON. Field problems (a finding that is not one, a cloud secinv does not have) are collected. */
export async function readProwler(
  bytes: AsyncIterable<Buffer>,
  problems: FieldProblem[],
  options: ProwlerOptions,
): Promise<Ingested> {
  const scans = new Map<string, Scan>();
  // A cloud secinv does not have is said once, not once per finding.
  const reported = new Set<string>();
  let withoutResource = 0;
  let empty = false;
  let seen = false;
  for await (const { path, value } of streamJson(bytes, [['*']])) {
    if (path.length === 0) {
      if (!Array.isArray(value))
        problems.push({ path: '$', message: 'must be a JSON array of OCSF Detection Findings (Prowler OCSF output)' });
      else empty = !seen;
      continue;
    }
    seen = true;
    const location = formatPath(path);
    if (!isObject(value)) {
      problems.push({ path: location, message: 'must be an object (an OCSF Detection Finding)' });
      continue;
    }
    if (value.class_uid !== 2004) {
      problems.push(
        value.CheckID !== undefined
          ? { path: location, message: "is Prowler's older JSON output: run prowler with `--output-formats json-ocsf`" }
          : { path: `${location}.class_uid`, message: 'must be 2004 (an OCSF Detection Finding)' },
      );
      continue;
    }
    const where = providerOf(value);
    if ('problem' in where) {
      if (!reported.has(where.problem)) problems.push({ path: `${location}.${where.path}`, message: where.problem });
      reported.add(where.problem);
      continue;
    }
    const resources = objects(value.resources).flatMap((r) => {
      const uid = text(r.uid);
      return uid === null ? [] : [{ resource: r, uid }];
    });
    if (resources.length === 0) {
      withoutResource += 1;
      continue;
    }
    const status = text(value.status_code)?.toUpperCase();
    const metadata = isObject(value.metadata) ? value.metadata : {};
    const checkId = text(metadata.event_code);
    if ((status === 'FAIL' || status === 'PASS') && checkId === null) {
      problems.push({
        path: `${location}.metadata.event_code`,
        message: 'is required (the check id, a non-empty string)',
      });
      continue;
    }
    if (checkId !== null && overLimit(checkId, SHORT_KEY_BYTES, `${location}.metadata.event_code`, problems)) continue;
    const time = findingTime(value);
    const failure = status === 'FAIL' && checkId !== null ? failedCheck(value, checkId) : null;
    for (const { resource, uid } of resources) {
      const scan = scans.get(uid) ?? resourceScan(value, resource, uid, where.provider, options);
      scans.set(uid, scan);
      // The resource was scanned when its latest finding was made.
      if (time !== null && (scan.scannedAt === null || time > scan.scannedAt)) scan.scannedAt = time;
      if (failure) addFailedCheck(scan.checks, { ...failure });
      else if (status === 'PASS' && checkId !== null) scan.checks.passed.add(checkId);
      // MANUAL and any other status: the resource is an asset, its checks say nothing.
    }
  }
  const warnings =
    withoutResource === 0
      ? []
      : [
          `${withoutResource} finding${withoutResource === 1 ? '' : 's'} without a resource uid ${withoutResource === 1 ? 'was' : 'were'} skipped`,
        ];
  // Prowler writes `[]` when a run has no finding. Only a passing finding resolves a failure on its resource, and this
  // one names no account, resource or check: it can resolve nothing.
  if (empty) warnings.push(EMPTY_REPORT);
  return { scans: [...scans.values()], vex: null, unmatchable: 0, warnings };
}
