// Trivy's Kubernetes reports as one scan per resource (docs/INGEST.md, "Kubernetes"): `trivy k8s --format json` in
// both layouts Trivy has written (the current `Resources[]`, and the older top-level `Vulnerabilities[]` /
// `Misconfigurations[]`), and trivy-operator's VulnerabilityReport resources (one, or a `List` of them). Every
// resource becomes a Kubernetes asset `Kubernetes::<Group>::<Kind>` whose id names its cluster, namespace, kind and
// name; a Result's `Target` (an image in the workload) is the packages' `targetName`, never the asset.
import { UserError } from '../domain/errors.js';
import { mapSeverity } from '../domain/scan.js';
import { isObject, objects, text, texts, timestamp, type Json } from '../input/json.js';
import { formatPath, streamJson } from '../input/stream.js';
import { findingSet, noChecks, type Scan, type ScanSecret } from './scan.js';
import { addMisconfiguration, findingOf, secretOf, trivyChecks, type FieldProblem } from './trivy.js';

export interface KubernetesOptions {
  /** The cluster, when the report does not name it (trivy-operator never does). */
  cluster?: string | undefined;
  region?: string | undefined;
}

/** API groups of the kinds a cluster scan reports, in the contract's `Provider::Service::Type` casing. */
const GROUPS: Record<string, string> = {
  Pod: 'Core',
  Service: 'Core',
  ServiceAccount: 'Core',
  ConfigMap: 'Core',
  Secret: 'Core',
  Namespace: 'Core',
  Node: 'Core',
  PersistentVolume: 'Core',
  PersistentVolumeClaim: 'Core',
  ReplicationController: 'Core',
  Deployment: 'Apps',
  ReplicaSet: 'Apps',
  StatefulSet: 'Apps',
  DaemonSet: 'Apps',
  Job: 'Batch',
  CronJob: 'Batch',
  Role: 'Rbac',
  RoleBinding: 'Rbac',
  ClusterRole: 'Rbac',
  ClusterRoleBinding: 'Rbac',
  Ingress: 'Networking',
  NetworkPolicy: 'Networking',
};

/** The resource type of a kind this table knows (`Pod` → `Kubernetes::Core::Pod`), else null. */
export const kubernetesKindType = (kind: string): string | null =>
  Object.hasOwn(GROUPS, kind) ? `Kubernetes::${GROUPS[kind]}::${kind}` : null;

/** Characters a kind may hold in a resource type (a custom resource's kind is free text). */
const typeOf = (kind: string): string =>
  kubernetesKindType(kind) ?? `Kubernetes::Custom::${kind.replace(/[^A-Za-z0-9]/g, '')}`;

interface ResourceName {
  cluster: string;
  namespace: string | null;
  kind: string;
  name: string;
}

function resourceScan(
  scanner: string,
  id: ResourceName,
  options: KubernetesOptions,
  scannedAt: string | null,
  reportId: string | null,
  rawData: Record<string, unknown>,
): Scan {
  return {
    scanner,
    artifact: {
      kind: 'resource',
      provider: 'Kubernetes',
      type: typeOf(id.kind),
      region: options.region ?? null,
      // Two clusters' default/ReplicaSet/x stay apart; a cluster-scoped resource has no namespace.
      resourceId: [id.cluster, id.namespace ?? '-', id.kind, id.name].join('/'),
      name: id.namespace === null ? id.name : `${id.namespace}/${id.name}`,
      rawData: { cluster: id.cluster, namespace: id.namespace, kind: id.kind, name: id.name, ...rawData },
    },
    scannedAt,
    reportId,
    findings: findingSet(),
    secrets: [] as ScanSecret[],
    // trivy-operator's VulnerabilityReports hold no checks: they never resolve Trivy's.
    checks: scanner === 'trivy' ? trivyChecks() : noChecks(),
  };
}

const clusterOf = (named: string | null, options: KubernetesOptions): string => {
  const cluster = named ?? options.cluster;
  if (cluster === undefined) throw new UserError('this report names no cluster: give --cluster NAME');
  return cluster;
};

/** `trivy k8s --format json`: each resource (with its Results) is streamed; the cluster name comes first. */
export async function readTrivyKubernetes(
  bytes: AsyncIterable<Buffer>,
  problems: FieldProblem[],
  options: KubernetesOptions,
): Promise<Scan[]> {
  const scans = new Map<string, Scan>();
  const patterns = [
    ['Resources', '*'],
    ['Vulnerabilities', '*'],
    ['Misconfigurations', '*'],
  ];
  let cluster: string | null = null;
  for await (const { path, value, skeleton } of streamJson(bytes, patterns)) {
    if (path.length === 0) continue;
    const location = formatPath(path);
    if (!isObject(value)) {
      problems.push({ path: location, message: 'must be an object' });
      continue;
    }
    cluster ??= clusterOf(isObject(skeleton) ? text(skeleton.ClusterName) : null, options);
    const kind = text(value.Kind);
    const name = text(value.Name);
    if (kind === null || name === null) {
      problems.push({ path: location, message: 'must name its resource (`Kind` and `Name`)' });
      continue;
    }
    const namespace = text(value.Namespace);
    const key = `${namespace ?? ''}/${kind}/${name}`;
    // The older layout lists a resource once per list (vulnerabilities, misconfigurations): one asset.
    const scan = scans.get(key) ?? resourceScan('trivy', { cluster, namespace, kind, name }, options, null, null, {});
    scans.set(key, scan);
    objects(value.Results).forEach((result, r) => {
      objects(result.Vulnerabilities).forEach((row, i) => {
        const finding = findingOf(row, result, [...path, 'Results', r, 'Vulnerabilities', i], problems);
        if (finding) scan.findings.merge(finding);
      });
      for (const row of objects(result.Secrets)) scan.secrets.push(secretOf(row, result));
      objects(result.Misconfigurations).forEach((row, i) =>
        addMisconfiguration(scan.checks, row, formatPath([...path, 'Results', r, 'Misconfigurations', i]), problems),
      );
    });
  }
  return [...scans.values()];
}

/** trivy-operator's VulnerabilityReport (or a `List` of them): the workload from its labels, one scan per workload. */
export async function readTrivyOperator(
  bytes: AsyncIterable<Buffer>,
  problems: FieldProblem[],
  options: KubernetesOptions,
): Promise<Scan[]> {
  let root: Json = {};
  const items: { value: unknown; path: string }[] = [];
  for await (const { path, value } of streamJson(bytes, [['items', '*']])) {
    if (path.length === 0) root = isObject(value) ? value : {};
    else items.push({ value, path: formatPath(path) });
  }
  const reports = text(root.kind) === 'List' ? items : [{ value: root, path: '$' }];
  const scans = new Map<string, Scan>();
  for (const { value, path } of reports) {
    if (!isObject(value) || text(value.kind) !== 'VulnerabilityReport') {
      problems.push({ path: `${path}.kind`, message: 'must be "VulnerabilityReport"' });
      continue;
    }
    const metadata = isObject(value.metadata) ? value.metadata : {};
    const labels = isObject(metadata.labels) ? metadata.labels : {};
    const kind = text(labels['trivy-operator.resource.kind']);
    const name = text(labels['trivy-operator.resource.name']);
    if (kind === null || name === null) {
      problems.push({
        path: `${path}.metadata.labels`,
        message: 'must name the workload (trivy-operator.resource.kind and trivy-operator.resource.name)',
      });
      continue;
    }
    const namespace = text(labels['trivy-operator.resource.namespace']) ?? text(metadata.namespace);
    const container = text(labels['trivy-operator.container.name']);
    const report = isObject(value.report) ? value.report : {};
    const key = `${namespace ?? ''}/${kind}/${name}`;
    const scan =
      scans.get(key) ??
      resourceScan(
        'trivy-operator',
        { cluster: clusterOf(null, options), namespace, kind, name },
        options,
        timestamp(report.updateTimestamp),
        text(metadata.uid),
        { registry: report.registry ?? null, artifact: report.artifact ?? null, scanner: report.scanner ?? null },
      );
    scans.set(key, scan);
    objects(report.vulnerabilities).forEach((row, i) => {
      const location = `${path}.report.vulnerabilities[${i}]`;
      const id = text(row.vulnerabilityID);
      if (id === null) {
        problems.push({ path: `${location}.vulnerabilityID`, message: 'is required (a non-empty string)' });
        return;
      }
      scan.findings.merge({
        vulnerabilityId: id,
        title: text(row.title) ?? id,
        description: null,
        // The operator's `score` is not the severity (CVE-2023-23914: CRITICAL with a score of 4.2).
        severity: mapSeverity(row.severity),
        severitySource: 'trivy-operator',
        publishedDate: null,
        primaryUrl: text(row.primaryLink) ?? texts(row.links)[0] ?? null,
        cwes: [],
        packages: [
          {
            packageName: text(row.resource),
            installedVersion: text(row.installedVersion),
            fixedVersion: text(row.fixedVersion),
            targetName: container,
            targetType: null,
            targetPath: null,
            targetClass: 'os-pkgs',
            purl: null,
          },
        ],
        // The operator reports a score but no vector: not exploitable by the vector rule.
        vectors: [],
        aliases: [],
        location,
      });
    });
  }
  return [...scans.values()];
}
