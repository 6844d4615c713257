// Trivy's JSON report (`trivy image|fs|repo|vm --format json`, SchemaVersion 2) as a Scan, streamed: the findings,
// secrets and misconfigurations of each Result come one by one; the header, Metadata and each Result's Target are read
// before them.
import { mapSeverity, targetClassOf } from '../domain/scan.js';
import { SHORT_KEY_BYTES } from '../domain/limits.js';
import { isObject, overLimit, text, texts, timestamp, type Json } from '../input/json.js';
import { formatPath, streamJson, type JsonPath } from '../input/stream.js';
import {
  addFailedCheck,
  findingSet,
  noChecks,
  type Scan,
  type ScanChecks,
  type ScanFinding,
  type ScanSecret,
  type ScannedArtifact,
} from './scan.js';

export interface FieldProblem {
  path: string;
  message: string;
}

/** `teamdojo:latest (alpine 3.9.4)` → `teamdojo:latest`: an OS target names the image and its OS release. */
const withoutOs = (target: string): string => target.replace(/ \([^()]*(\([^()]*\))?[^()]*\)$/, '');

function artifactOf(report: Json): ScannedArtifact {
  const type = text(report.ArtifactType);
  const metadata = isObject(report.Metadata) ? report.Metadata : {};
  // Older Trivy wrote no ArtifactType; its image reports have image Metadata or OS Results.
  if (type !== null && type !== 'container_image') return { kind: 'other', description: `a Trivy ${type} scan` };
  const results = Array.isArray(report.Results) ? report.Results.filter(isObject) : [];
  const firstTarget = results.map((r) => text(r.Target)).find((t) => t !== null) ?? null;
  const reference = text(report.ArtifactName) ?? (firstTarget === null ? null : withoutOs(firstTarget));
  if (reference === null) return { kind: 'other', description: 'a Trivy report that names no artifact' };
  const repository = reference.replace(/[:@][^/]*$/, '');
  const digest = texts(metadata.RepoDigests)[0] ?? null;
  const imageId = text(metadata.ImageID);
  const os = isObject(metadata.OS) ? metadata.OS : null;
  const config = isObject(metadata.ImageConfig) ? metadata.ImageConfig : {};
  // The image's build history is long and says nothing about the asset.
  const { ImageConfig: _config, ...rest } = metadata;
  const { history: _history, ...configWithoutHistory } = config;
  return {
    kind: 'image',
    reference,
    // A tag moves, a digest does not: the registry digest, else the image's config digest, else the reference.
    resourceId: digest ?? (imageId !== null ? `${repository}@${imageId}` : reference),
    imageId,
    resourceName: texts(metadata.RepoTags)[0] ?? null,
    operatingSystem: os && {
      name: text(os.Family),
      version: text(os.Name),
      architecture: text(config.architecture),
      platform: text(config.os),
    },
    rawData: {
      scanner: 'trivy',
      schemaVersion: report.SchemaVersion,
      artifactName: report.ArtifactName ?? null,
      artifactType: report.ArtifactType ?? null,
      metadata: { ...rest, ...(isObject(metadata.ImageConfig) ? { ImageConfig: configWithoutHistory } : {}) },
    },
  };
}

/** One row of a Result's `Vulnerabilities` as a finding (also read from Trivy's Kubernetes reports). */
export function findingOf(row: Json, result: Json, path: JsonPath, problems: FieldProblem[]): ScanFinding | null {
  const location = formatPath(path);
  const id = text(row.VulnerabilityID);
  if (id === null) {
    problems.push({ path: `${location}.VulnerabilityID`, message: 'is required (a non-empty string)' });
    return null;
  }
  const cvss = isObject(row.CVSS) ? row.CVSS : {};
  const vectors = Object.values(cvss).flatMap((v) => (isObject(v) ? texts([v.V3Vector, v.V40Vector, v.V2Vector]) : []));
  const target = text(result.Target);
  const pkgType = text(result.Type);
  return {
    vulnerabilityId: id,
    title: text(row.Title) ?? id,
    description: text(row.Description),
    severity: mapSeverity(row.Severity),
    severitySource: text(row.SeveritySource),
    publishedDate: timestamp(row.PublishedDate),
    primaryUrl: text(row.PrimaryURL),
    cwes: texts(row.CweIDs),
    packages: [
      {
        packageName: text(row.PkgName),
        installedVersion: text(row.InstalledVersion),
        fixedVersion: typeof row.FixedVersion === 'string' ? row.FixedVersion : null,
        targetName: target,
        targetType: pkgType,
        targetPath: text(row.PkgPath) ?? target,
        targetClass: text(result.Class) ?? (pkgType === null ? null : targetClassOf(pkgType)),
        purl: isObject(row.PkgIdentifier) ? text(row.PkgIdentifier.PURL) : null,
      },
    ],
    vectors,
    aliases: texts(row.VendorIDs).filter((alias) => alias !== id),
    location,
  };
}

/** One row of a Result's `Secrets`. */
export function secretOf(row: Json, result: Json): ScanSecret {
  return {
    severity: mapSeverity(row.Severity),
    entry: {
      ruleId: text(row.RuleID),
      category: text(row.Category),
      title: text(row.Title),
      target: text(result.Target),
      startLine: typeof row.StartLine === 'number' ? row.StartLine : null,
      endLine: typeof row.EndLine === 'number' ? row.EndLine : null,
      source: 'trivy',
    },
  };
}

/**
 * One row of a Result's `Misconfigurations` into the scan's checks (also read from Trivy's Kubernetes reports): FAIL is
 * a failed check, PASS (listed with `--include-non-failures`) a passed one; EXCEPTION (waived by a Trivy policy) is
 * neither. A check is known by its `ID` (`KSV001`, `DS002`), else its `AVDID`.
 */
export function addMisconfiguration(checks: ScanChecks, row: Json, location: string, problems: FieldProblem[]): void {
  const checkId = text(row.ID) ?? text(row.AVDID);
  if (checkId === null) {
    problems.push({ path: `${location}.ID`, message: 'is required (a non-empty string), or AVDID' });
    return;
  }
  if (overLimit(checkId, SHORT_KEY_BYTES, `${location}.${text(row.ID) === null ? 'AVDID' : 'ID'}`, problems)) return;
  const status = text(row.Status)?.toUpperCase();
  if (status === 'PASS') checks.passed.add(checkId);
  if (status !== 'FAIL') return;
  addFailedCheck(checks, {
    checkId,
    source: 'trivy',
    title: text(row.Title),
    description: text(row.Description),
    severity: mapSeverity(row.Severity),
    remediation: text(row.Resolution),
    references: [...new Set([...texts(row.References), ...texts([row.PrimaryURL])])],
    detail: text(row.Message),
  });
}

/** A Trivy report runs every check its scanners have: a re-scan resolves the failures it no longer lists. */
export const trivyChecks = (): ScanChecks => noChecks(true);

const STREAMED = [
  ['Results', '*', 'Vulnerabilities', '*'],
  ['Results', '*', 'Secrets', '*'],
  ['Results', '*', 'Misconfigurations', '*'],
];

/** Reads a Trivy report. Field problems (a finding without an id, a Result that is not an object) are collected. */
export async function readTrivy(
  bytes: AsyncIterable<Buffer>,
  problems: FieldProblem[],
  findingsInMemory?: number,
): Promise<Scan> {
  const findings = findingSet(findingsInMemory);
  const secrets: ScanSecret[] = [];
  const checks = trivyChecks();
  let report: Json = {};
  try {
    for await (const { path, value, skeleton } of streamJson(bytes, STREAMED)) {
      if (path.length === 0) {
        if (!isObject(value)) throw new Error('is not a Trivy report: its top level is not an object');
        report = value;
        continue;
      }
      const results = isObject(skeleton) && Array.isArray(skeleton.Results) ? skeleton.Results : [];
      const result: unknown = results[path[1] as number];
      if (!isObject(value) || !isObject(result)) {
        problems.push({ path: formatPath(path), message: 'must be an object' });
        continue;
      }
      if (path[2] === 'Secrets') secrets.push(secretOf(value, result));
      else if (path[2] === 'Misconfigurations') addMisconfiguration(checks, value, formatPath(path), problems);
      else {
        const finding = findingOf(value, result, path, problems);
        if (finding) findings.merge(finding);
      }
    }
  } catch (error) {
    // A report that fails part-way frees its scratch file now, not when it is collected.
    findings.close();
    throw error;
  }
  if (report.Results !== undefined && report.Results !== null && !Array.isArray(report.Results)) {
    problems.push({ path: '$.Results', message: 'must be an array' });
  }
  return {
    scanner: 'trivy',
    artifact: artifactOf(report),
    scannedAt: timestamp(report.CreatedAt),
    reportId: text(report.ReportID),
    findings,
    secrets,
    checks,
  };
}
