// trivy-operator's reports (docs/INGEST.md, "Kubernetes"): VulnerabilityReport (findings), ConfigAuditReport (checks,
// as Trivy's misconfigurations) and ExposedSecretReport (secrets), one resource, a `List` of them, or a bare JSON array
// of them. The workload comes from the operator's labels; the reports of one workload (one per container, one per
// kind) are one scan, which says only what its kinds cover: a ConfigAuditReport alone resolves no finding.
import { OPERATOR_KINDS, OPERATOR_REFUSED } from '../input/detect.js';
import { mapSeverity } from '../domain/scan.js';
import { SHORT_KEY_BYTES } from '../domain/limits.js';
import { isObject, objects, overLimit, text, texts, timestamp, type Json } from '../input/json.js';
import { formatPath, streamJson } from '../input/stream.js';
import { clusterOf, resourceScan, type KubernetesOptions } from './kubernetes.js';
import { addFailedCheck, type Scan } from './scan.js';
import type { FieldProblem } from './trivy.js';

/** Why a resource is not one secinv reads: the operator's other kinds by name. */
const refusal = (kind: string | null): string =>
  (kind !== null && OPERATOR_REFUSED[kind]) ||
  `must be one of ${OPERATOR_KINDS.join(', ')}, not ${JSON.stringify(kind)}`;

/** The report's bytes, and whether the document is an array (its first character), told before it is parsed. */
async function opening(bytes: AsyncIterable<Buffer>): Promise<{ array: boolean; bytes: AsyncIterable<Buffer> }> {
  const iterator = bytes[Symbol.asyncIterator]();
  const read: Buffer[] = [];
  let first = '';
  let ended = false;
  while (first === '' && !ended) {
    const next = await iterator.next();
    if (next.done === true) ended = true;
    else {
      read.push(next.value);
      first = next.value.toString('utf8').trimStart().charAt(0);
    }
  }
  const replay = async function* (): AsyncGenerator<Buffer> {
    yield* read;
    if (ended) return;
    for (let next = await iterator.next(); next.done !== true; next = await iterator.next()) yield next.value;
  };
  return { array: first === '[', bytes: replay() };
}

function addFindings(scan: Scan, report: Json, path: string, container: string | null, problems: FieldProblem[]) {
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

/** `report.checks[]`: `success: false` is a failed check, `true` a passed one; the report lists every check it ran. */
function addChecks(scan: Scan, report: Json, path: string, problems: FieldProblem[]) {
  scan.checks.complete = true;
  objects(report.checks).forEach((row, i) => {
    const location = `${path}.report.checks[${i}]`;
    const checkId = text(row.checkID) ?? text(row.ID);
    if (checkId === null) {
      problems.push({ path: `${location}.checkID`, message: 'is required (a non-empty string)' });
      return;
    }
    if (overLimit(checkId, SHORT_KEY_BYTES, `${location}.checkID`, problems)) return;
    if (row.success === true) {
      scan.checks.passed.add(checkId);
      return;
    }
    if (row.success !== false) {
      problems.push({ path: `${location}.success`, message: 'must be true or false' });
      return;
    }
    addFailedCheck(scan.checks, {
      checkId,
      source: 'trivy-operator',
      title: text(row.title),
      description: text(row.description),
      severity: mapSeverity(row.severity),
      remediation: text(row.remediation),
      references: [],
      detail: texts(row.messages).join('\n') || null,
    });
  });
}

/** `report.secrets[]` as Trivy's secrets are kept: what was found where, never the (masked) match. */
function addSecrets(scan: Scan, report: Json) {
  for (const row of objects(report.secrets))
    scan.secrets.push({
      severity: mapSeverity(row.severity),
      entry: {
        ruleId: text(row.ruleID),
        category: text(row.category),
        title: text(row.title),
        target: text(row.target),
        startLine: null,
        endLine: null,
        source: 'trivy-operator',
      },
    });
}

export async function readTrivyOperator(
  bytes: AsyncIterable<Buffer>,
  problems: FieldProblem[],
  options: KubernetesOptions,
): Promise<Scan[]> {
  let root: unknown = {};
  const items: { value: unknown; path: string }[] = [];
  // A `List` holds its reports in `items`; a bare array (`kubectl get … -o json | jq .items`) is one itself.
  const document = await opening(bytes);
  for await (const { path, value } of streamJson(document.bytes, [document.array ? ['*'] : ['items', '*']])) {
    if (path.length === 0) root = value;
    else items.push({ value, path: formatPath(path) });
  }
  const list = Array.isArray(root) || (isObject(root) && text(root.kind) === 'List');
  const reports = list ? items : [{ value: root, path: '$' }];
  const scans = new Map<string, Scan>();
  for (const { value, path } of reports) {
    const kind = isObject(value) ? text(value.kind) : null;
    if (!isObject(value) || kind === null || !OPERATOR_KINDS.includes(kind)) {
      problems.push({ path: `${path}.kind`, message: refusal(kind) });
      continue;
    }
    const metadata = isObject(value.metadata) ? value.metadata : {};
    const labels = isObject(metadata.labels) ? metadata.labels : {};
    const workloadKind = text(labels['trivy-operator.resource.kind']);
    const name = text(labels['trivy-operator.resource.name']);
    if (workloadKind === null || name === null) {
      problems.push({
        path: `${path}.metadata.labels`,
        message: 'must name the workload (trivy-operator.resource.kind and trivy-operator.resource.name)',
      });
      continue;
    }
    const namespace = text(labels['trivy-operator.resource.namespace']) ?? text(metadata.namespace);
    const report = isObject(value.report) ? value.report : {};
    const key = `${namespace ?? ''}/${workloadKind}/${name}`;
    const found = scans.get(key);
    const scan =
      found ??
      resourceScan(
        'trivy-operator',
        { cluster: clusterOf(null, options), namespace, kind: workloadKind, name },
        options,
        timestamp(report.updateTimestamp),
        text(metadata.uid),
        { registry: report.registry ?? null, artifact: report.artifact ?? null, scanner: report.scanner ?? null },
      );
    if (!found) scan.covers = { findings: false, secrets: false };
    scans.set(key, scan);
    const covers = scan.covers ?? { findings: false, secrets: false };
    if (kind === 'VulnerabilityReport') {
      covers.findings = true;
      addFindings(scan, report, path, text(labels['trivy-operator.container.name']), problems);
    } else if (kind === 'ConfigAuditReport') addChecks(scan, report, path, problems);
    else {
      covers.secrets = true;
      addSecrets(scan, report);
    }
  }
  return [...scans.values()];
}
