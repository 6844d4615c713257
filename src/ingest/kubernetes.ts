// Trivy's Kubernetes reports as one scan per resource (docs/INGEST.md, "Kubernetes"): `trivy k8s --format json` in
// every layout Trivy has written (the current `Resources[]`, the summary report's `Findings[]`, and the older top-level
// `Vulnerabilities[]` / `Misconfigurations[]`). Every resource becomes a Kubernetes asset `Kubernetes::<Group>::<Kind>`
// whose id names its cluster, namespace, kind and name; a Result's `Target` (an image in the workload) is the packages'
// `targetName`, never the asset. trivy-operator's resources are read in src/ingest/trivy-operator.ts.
import { UserError } from '../domain/errors.js';
import { isObject, objects, text } from '../input/json.js';
import { formatPath, streamJson } from '../input/stream.js';
import { findingSet, noChecks, type Scan, type ScanSecret } from './scan.js';
import { addMisconfiguration, findingOf, secretOf, trivyChecks, type FieldProblem } from './trivy.js';

export interface KubernetesOptions {
  /** The cluster, when the report does not name it (trivy-operator never does). */
  cluster?: string | undefined;
  region?: string | undefined;
  /** Findings of a scan kept as objects before the rest go to disk (src/ingest/scan.ts findingSet). */
  findingsInMemory?: number | undefined;
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

export function resourceScan(
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
    findings: findingSet(options.findingsInMemory),
    secrets: [] as ScanSecret[],
    // trivy-operator's VulnerabilityReports hold no checks: they never resolve Trivy's.
    checks: scanner === 'trivy' ? trivyChecks() : noChecks(),
  };
}

export const clusterOf = (named: string | null, options: KubernetesOptions): string => {
  const cluster = named ?? options.cluster;
  if (cluster === undefined) throw new UserError('this report names no cluster: give --cluster NAME');
  return cluster;
};

/**
 * The lists of resources Trivy has written: `Resources` (current `--report all`), `Findings` (`--report summary`), and
 * the older `Vulnerabilities` / `Misconfigurations`, one entry per resource each.
 */
const MAPPED = ['Resources', 'Findings', 'Vulnerabilities', 'Misconfigurations'];

/**
 * A top-level list of entries that none of those names holds is a layout this reader does not know: refused by its key,
 * rather than ingested as a report with nothing in it.
 */
function unmappedEntries(report: unknown, problems: FieldProblem[]): void {
  if (!isObject(report)) {
    problems.push({ path: '$', message: 'must be an object (a Trivy Kubernetes report)' });
    return;
  }
  for (const [key, value] of Object.entries(report))
    if (!MAPPED.includes(key) && Array.isArray(value) && value.length > 0)
      problems.push({
        path: `$.${key}`,
        message: `holds ${value.length} entries in a layout secinv does not read (it reads ${MAPPED.join(', ')}): nothing of this report was written`,
      });
}

/** `trivy k8s --format json`: each resource (with its Results) is streamed; the cluster name comes first. */
export async function readTrivyKubernetes(
  bytes: AsyncIterable<Buffer>,
  problems: FieldProblem[],
  options: KubernetesOptions,
): Promise<Scan[]> {
  const scans = new Map<string, Scan>();
  const patterns = MAPPED.map((key) => [key, '*']);
  let cluster: string | null = null;
  for await (const { path, value, skeleton } of streamJson(bytes, patterns)) {
    if (path.length === 0) {
      unmappedEntries(value, problems);
      continue;
    }
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
