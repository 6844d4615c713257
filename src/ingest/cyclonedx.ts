// A CycloneDX document (an SBOM with `vulnerabilities`, or a VEX document) as findings and VEX statements
// (docs/INGEST.md, "CycloneDX"). An entry without `analysis`, or `exploitable`/`in_triage`, that affects a component
// of this document is a finding on the document's asset; an entry `not_affected`, `false_positive` or `resolved` is a
// VEX statement about the products it affects. Entries that only affect other documents' products (BOM-Links) are
// statements about those products: they exempt, or create nothing.
import { basename } from 'node:path';
import { PackageURL } from 'packageurl-js';
import { mapSeverity, targetClassOf } from '../domain/scan.js';
import {
  isExempting,
  ociDigest,
  productText,
  purlKey,
  purlPackage,
  type VexProduct,
  type VexStatement,
} from '../domain/vex.js';
import { LONG_KEY_BYTES, SHORT_KEY_BYTES } from '../domain/limits.js';
import { isObject, objects, overLimit, text, timestamp, type Json } from '../input/json.js';
import { formatPath, streamJson } from '../input/stream.js';
import { firstSentence, findingSet, noChecks, type Ingested, type ScanPackage, type ScannedArtifact } from './scan.js';
import type { FieldProblem } from './trivy.js';
import { scopeCoversSubject, versionScope, type VersionScope } from './vex-versions.js';

/** Every component of the document by its bom-ref, nested ones too. */
function componentsByRef(list: unknown, into = new Map<string, Json>()): Map<string, Json> {
  for (const c of objects(list)) {
    const ref = text(c['bom-ref']);
    if (ref !== null) into.set(ref, c);
    componentsByRef(c.components, into);
  }
  return into;
}

/** Purl types in Trivy's words (as the other scanners' packages read). */
const TARGET_TYPES: Record<string, string> = { maven: 'jar', gem: 'gemspec' };

function packageOf(component: Json, targetName: string | null): ScanPackage {
  const purl = text(component.purl);
  let parsed: PackageURL | null = null;
  try {
    parsed = purl === null ? null : PackageURL.fromString(purl);
  } catch {
    parsed = null;
  }
  const type = parsed?.type ?? null;
  const group = text(component.group) ?? parsed?.namespace ?? null;
  const name = text(component.name) ?? parsed?.name ?? null;
  return {
    // Maven's group is part of the name, as Trivy writes it (`org.apache.logging.log4j:log4j-core`).
    packageName: group !== null && name !== null && type === 'maven' ? `${group}:${name}` : name,
    installedVersion: text(component.version) ?? parsed?.version ?? null,
    fixedVersion: null,
    targetName,
    targetType: type === null ? null : (TARGET_TYPES[type] ?? type),
    targetPath: null,
    targetClass: type === null ? null : targetClassOf(type),
    purl,
  };
}

/**
 * The rating that gives the severity: among ratings with a severity, the one from the vulnerability's own source, else
 * NVD's, else GHSA's, else the highest.
 */
function chosenRating(v: Json): { severity: string; source: string | null } | null {
  const rated = objects(v.ratings).filter((r) => text(r.severity) !== null);
  const sourceOf = (r: Json) => (isObject(r.source) ? text(r.source.name) : null);
  const own = isObject(v.source) ? text(v.source.name)?.toLowerCase() : undefined;
  const pick =
    rated.find((r) => own !== undefined && sourceOf(r)?.toLowerCase() === own) ??
    rated.find((r) => sourceOf(r)?.toLowerCase() === 'nvd') ??
    rated.find((r) => sourceOf(r)?.toLowerCase() === 'ghsa') ??
    [...rated].sort((a, b) => rank(text(b.severity)) - rank(text(a.severity)))[0];
  if (!pick) return null;
  return {
    severity: text(pick.severity) ?? 'unknown',
    source: sourceOf(pick) ?? (isObject(v.source) ? text(v.source.name) : null),
  };
}
const RANKS = ['none', 'unknown', 'info', 'low', 'medium', 'high', 'critical'];
const rank = (s: string | null) => RANKS.indexOf((s ?? '').toLowerCase());

/** CVSS v3 vectors of the ratings; a bare vector declared v3.x gets its prefix (environmental metrics are ignored). */
const vectorsOf = (v: Json): string[] =>
  objects(v.ratings).flatMap((r) => {
    const vector = text(r.vector);
    if (vector === null) return [];
    if (vector.startsWith('CVSS:')) return [vector];
    const method = text(r.method);
    return method === 'CVSSv3' || method === 'CVSSv31' ? [`CVSS:3.1/${vector}`] : [];
  });

export async function readCycloneDx(
  bytes: AsyncIterable<Buffer>,
  problems: FieldProblem[],
  fileName: string,
  findingsInMemory?: number,
): Promise<Ingested> {
  const entries: { value: unknown; path: string }[] = [];
  let root: Json = {};
  // The vulnerabilities are kept (compactly) until the components, which may come after them, are known.
  for await (const { path, value } of streamJson(bytes, [['vulnerabilities', '*']])) {
    if (path.length === 0) root = isObject(value) ? value : {};
    else entries.push({ value, path: formatPath(path) });
  }
  const metadata = isObject(root.metadata) ? root.metadata : {};
  const self = isObject(metadata.component) ? metadata.component : null;
  const selfRef = self === null ? null : text(self['bom-ref']);
  const components = componentsByRef(root.components);
  const serial = text(root.serialNumber);
  const documentId =
    serial !== null ? `${serial}/${typeof root.version === 'number' ? root.version : 1}` : basename(fileName);
  overLimit(documentId, SHORT_KEY_BYTES, serial === null ? '(the file name)' : '$.serialNumber', problems);
  const localSerial = serial?.replace(/^urn:uuid:/, '') ?? null;
  const scannedAt = timestamp(metadata.timestamp);
  const targetName = self === null ? null : text(self.name);

  /** A ref of `affects`: this document's component, the document's own subject, a purl, or another document's. */
  const resolve = (ref: string): { component: Json } | 'self' | { purl: string } | null => {
    let local = ref;
    const link = /^urn:cdx:([^/]+)\/\d+#(.+)$/.exec(ref);
    if (link) {
      if (link[1] !== localSerial) return null;
      local = decodeURIComponent(link[2] ?? '');
    }
    if (selfRef !== null && local === selfRef) return 'self';
    const component = components.get(local);
    if (component) return { component };
    return local.startsWith('pkg:') ? { purl: local } : null;
  };

  const findings = findingSet(findingsInMemory);
  const statements: VexStatement[] = [];
  const warnings: string[] = [];
  const subjectVersion = self === null ? null : text(self.version);
  let unmatchable = 0;
  for (const { value, path } of entries) {
    if (!isObject(value)) {
      problems.push({ path, message: 'must be an object' });
      continue;
    }
    const id = text(value.id);
    if (id === null) {
      problems.push({ path: `${path}.id`, message: 'is required (a non-empty string)' });
      continue;
    }
    if (overLimit(id, SHORT_KEY_BYTES, `${path}.id`, problems)) continue;
    const analysis = isObject(value.analysis) ? value.analysis : {};
    const state = text(analysis.state);
    const refs = objects(value.affects)
      .map((a) => text(a.ref))
      .filter((r): r is string => r !== null);
    const aliases = objects(value.references)
      .map((r) => text(r.id))
      .filter((r): r is string => r !== null && r !== id);
    if (state !== null && isExempting(state)) {
      for (const [a, affect] of objects(value.affects).entries()) {
        const ref = text(affect.ref);
        if (ref === null) continue;
        const target = resolve(ref);
        const scope = versionScope(affect, `${path}.affects[${a}]`, problems, warnings);
        const purl =
          target === null || target === 'self' ? null : 'purl' in target ? target.purl : text(target.component.purl);
        const product = statementProduct(target === 'self', purl, scope);
        if (product === 'none') continue;
        if (product === null) {
          unmatchable += 1;
          continue;
        }
        if (
          product.kind === 'asset' &&
          scope !== null &&
          !scopeCoversSubject(scope, subjectVersion, `${path}.affects[${a}]`, warnings)
        )
          continue;
        if (
          (product.kind === 'purl' || product.kind === 'versions') &&
          overLimit(productText(product), LONG_KEY_BYTES, `${path}.affects`, problems)
        )
          continue;
        statements.push({
          vulnerabilityId: id,
          aliases,
          product,
          status: state,
          justification: text(analysis.justification),
          detail: text(analysis.detail),
          timestamp: timestamp(analysis.firstIssued) ?? scannedAt,
          updatedAt: timestamp(analysis.lastUpdated),
        });
      }
      continue;
    }
    // A finding of this document's subject: it affects one of its components (or names none).
    const local = refs.map(resolve).filter((r) => r !== null);
    if (refs.length > 0 && local.length === 0) continue;
    const packages = local.flatMap((r) =>
      r === 'self'
        ? []
        : 'component' in r
          ? [packageOf(r.component, targetName)]
          : [packageOf({ purl: r.purl }, targetName)],
    );
    const rating = chosenRating(value);
    const description = [text(value.description), text(value.detail)].filter((d) => d !== null).join('\n\n') || null;
    findings.merge({
      vulnerabilityId: id,
      title: firstSentence(text(value.description)) ?? id,
      description,
      severity: mapSeverity(rating?.severity),
      severitySource: rating?.source ?? null,
      publishedDate: timestamp(value.published),
      primaryUrl: isObject(value.source) ? text(value.source.url) : null,
      cwes: Array.isArray(value.cwes)
        ? value.cwes.filter((c) => typeof c === 'number' || typeof c === 'string').map(String)
        : [],
      packages,
      vectors: vectorsOf(value),
      aliases,
      location: path,
    });
  }
  return {
    scans: [
      {
        scanner: 'cyclonedx',
        artifact: artifactOf(self),
        scannedAt,
        reportId: serial,
        findings,
        secrets: [],
        checks: noChecks(),
      },
    ],
    vex: { documentId, statements },
    unmatchable,
    warnings,
  };
}

/**
 * What an exempting statement's ref names: the document's subject, an image by digest, a package version, or, when
 * `affects[].versions` limits it, the listed versions of the package (`none`: it lists no version it exempts).
 */
function statementProduct(
  subject: boolean,
  purl: string | null,
  scope: VersionScope | null,
): VexProduct | 'none' | null {
  if (subject) return { kind: 'asset', id: '' };
  if (purl === null) return null;
  const digest = ociDigest(purl);
  if (digest !== null) return { kind: 'image', digest };
  if (scope === null) {
    const key = purlKey(purl);
    return key === null ? null : { kind: 'purl', key };
  }
  if (scope.versions.length === 0 && scope.ranges.length === 0) return 'none';
  const pkg = purlPackage(purl);
  return pkg === null ? null : { kind: 'versions', package: pkg, ...scope };
}

/** A container image as the document's subject (Trivy's image SBOMs): its reference and digest; anything else needs `--asset`. */
function artifactOf(self: Json | null): ScannedArtifact {
  const name = self === null ? null : text(self.name);
  if (self === null || name === null || text(self.type) !== 'container')
    return { kind: 'other', description: 'a CycloneDX document whose subject is not a container image' };
  const purl = text(self.purl);
  const digest = purl === null ? null : ociDigest(purl);
  const repository = name.replace(/[:@][^/]*$/, '');
  return {
    kind: 'image',
    reference: name,
    resourceId: digest === null ? name : `${repository}@${digest}`,
    imageId: null,
    resourceName: name,
    operatingSystem: null,
    rawData: { scanner: 'cyclonedx', component: { type: 'container', name, version: self.version ?? null, purl } },
  };
}
