// Grype's JSON report (`grype IMAGE|dir:PATH -o json`) as a Scan, streamed: its `matches` come first and one by one;
// `source`, `distro` and `descriptor` follow them, so what the matches need from those is filled in at the end.
import { mapSeverity, targetClassOf } from '../domain/scan.js';
import { isObject, objects, text, texts, timestamp, type Json } from '../input/json.js';
import { formatPath, streamJson } from '../input/stream.js';
import { findingSet, firstSentence, noChecks, type Scan, type ScanFinding, type ScannedArtifact } from './scan.js';
import type { FieldProblem } from './trivy.js';

const vectorsOf = (v: Json): string[] => objects(v.cvss).flatMap((c) => texts([c.vector]));

function findingOf(match: Json, location: string, problems: FieldProblem[]): ScanFinding | null {
  const vulnerability = isObject(match.vulnerability) ? match.vulnerability : {};
  const artifact = isObject(match.artifact) ? match.artifact : {};
  const id = text(vulnerability.id);
  if (id === null) {
    problems.push({ path: `${location}.vulnerability.id`, message: 'is required (a non-empty string)' });
    return null;
  }
  const related = objects(match.relatedVulnerabilities);
  const description =
    text(vulnerability.description) ?? related.map((r) => text(r.description)).find((d) => d !== null) ?? null;
  const fix = isObject(vulnerability.fix) ? texts(vulnerability.fix.versions) : [];
  const type = text(artifact.type);
  return {
    vulnerabilityId: id,
    title: firstSentence(description) ?? id,
    description,
    severity: mapSeverity(vulnerability.severity),
    severitySource: text(vulnerability.namespace),
    publishedDate: null,
    primaryUrl: text(vulnerability.dataSource),
    cwes: [],
    packages: [
      {
        packageName: text(artifact.name),
        installedVersion: text(artifact.version),
        fixedVersion: fix.length > 0 ? fix.join(', ') : null,
        // Filled in from `source` once it has been read.
        targetName: null,
        targetType: type,
        targetPath: text(objects(artifact.locations)[0]?.path),
        targetClass: type === null ? null : targetClassOf(type),
        purl: text(artifact.purl),
      },
    ],
    // The finding's own vectors and its aliases' (a distro advisory often has none, its NVD alias does).
    vectors: [...vectorsOf(vulnerability), ...related.flatMap(vectorsOf)],
    aliases: related.map((r) => text(r.id)).filter((alias): alias is string => alias !== null && alias !== id),
    location,
  };
}

function artifactOf(report: Json): { artifact: ScannedArtifact; targetName: string | null; distro: string | null } {
  const source = isObject(report.source) ? report.source : {};
  const distro = isObject(report.distro) ? report.distro : {};
  const target = isObject(source.target) ? source.target : {};
  const type = text(source.type) ?? 'unknown';
  const reference = text(target.userInput);
  const distroName = text(distro.name);
  if (type !== 'image' || reference === null) {
    return {
      artifact: { kind: 'other', description: `a Grype ${type} scan` },
      targetName: typeof source.target === 'string' ? source.target : reference,
      distro: distroName,
    };
  }
  const repository = reference.replace(/[:@][^/]*$/, '');
  const digest = text(target.manifestDigest) ?? text(target.imageID);
  const { layers: _layers, manifest: _manifest, config: _config, ...targetFacts } = target;
  return {
    artifact: {
      kind: 'image',
      reference,
      // A tag moves, a digest does not: the registry digest, else the manifest or image digest, else the reference.
      resourceId: texts(target.repoDigests)[0] ?? (digest !== null ? `${repository}@${digest}` : reference),
      imageId: text(target.imageID),
      resourceName: texts(target.tags)[0] ?? null,
      operatingSystem: {
        name: distroName,
        version: text(distro.version),
        architecture: text(target.architecture),
        platform: text(target.os),
      },
      rawData: {
        scanner: 'grype',
        source: { type, target: targetFacts },
        distro,
        descriptor: { name: report.descriptor && isObject(report.descriptor) ? report.descriptor.name : null },
      },
    },
    targetName: reference,
    distro: distroName,
  };
}

export async function readGrype(
  bytes: AsyncIterable<Buffer>,
  problems: FieldProblem[],
  findingsInMemory?: number,
): Promise<Scan> {
  const findings = findingSet(findingsInMemory);
  let report: Json = {};
  try {
    for await (const { path, value } of streamJson(bytes, [['matches', '*']])) {
      if (path.length === 0) {
        if (!isObject(value)) throw new Error('is not a Grype report: its top level is not an object');
        report = value;
      } else if (!isObject(value)) problems.push({ path: formatPath(path), message: 'must be an object' });
      else {
        const finding = findingOf(value, formatPath(path), problems);
        if (finding) findings.merge(finding);
      }
    }
  } catch (error) {
    // A report that fails part-way frees its scratch file now, not when it is collected.
    findings.close();
    throw error;
  }
  const descriptor = isObject(report.descriptor) ? report.descriptor : {};
  if (descriptor.name !== 'grype')
    problems.push({
      path: '$.descriptor.name',
      message: `must be "grype" in a Grype report, not ${JSON.stringify(descriptor.name ?? null)}`,
    });
  const { artifact, targetName, distro } = artifactOf(report);
  // The image is written after the matches: its name and distro reach the packages as each finding is read.
  findings.finish({ targetName, distro });
  return {
    scanner: 'grype',
    artifact,
    scannedAt: timestamp(descriptor.timestamp),
    reportId: null,
    findings,
    secrets: [],
    checks: noChecks(),
  };
}
