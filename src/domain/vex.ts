// VEX statements (CycloneDX `analysis`, OpenVEX) and the exemptions they become (docs/INGEST.md, "VEX"): a statement
// that a product is not affected by a vulnerability, or that it was fixed, exempts that vulnerability on the assets
// whose packages (or image) the product names. Statements are kept, so that assets scanned later are matched too.
import { PackageURL } from 'packageurl-js';
import { v5 as uuidV5 } from 'uuid';
import { inVers, parseVers } from './vers.js';
import type { Exemption } from './vulnerabilities.js';

/**
 * What a statement is about: a package (any version-pinned purl), some versions of a package (its purl without a
 * version, and the versions and `vers` ranges a CycloneDX `affects[].versions` lists), a container image by digest, or
 * an asset.
 */
export type VexProduct =
  | { kind: 'purl'; key: string }
  | { kind: 'versions'; package: string; versions: string[]; ranges: string[] }
  | { kind: 'image'; digest: string }
  | { kind: 'asset'; id: string };

export interface VexStatement {
  vulnerabilityId: string;
  /** Other ids of the vulnerability: the exemption has a rule for each. */
  aliases: string[];
  product: VexProduct;
  /** The status as the document writes it (`not_affected`, `fixed`, `resolved`, `in_triage`…). */
  status: string;
  justification: string | null;
  /** The document's explanation (CycloneDX `analysis.detail`, OpenVEX `impact_statement`). */
  detail: string | null;
  /** When the statement was made: its own time, else the document's; decides between statements on one product. */
  timestamp: string | null;
  /** When it was last updated (CycloneDX `analysis.lastUpdated`, OpenVEX `last_updated`). */
  updatedAt: string | null;
}

export interface VexDocument {
  /** OpenVEX `@id`, CycloneDX `serialNumber/version`, else the file name. */
  documentId: string;
  statements: VexStatement[];
}

/** Statuses that exempt (CycloneDX `not_affected`, `false_positive`, `resolved`, `resolved_with_pedigree`; OpenVEX `fixed`). */
const EXEMPTING = new Set(['not_affected', 'false_positive', 'resolved', 'resolved_with_pedigree', 'fixed']);
export const isExempting = (status: string): boolean => EXEMPTING.has(status);

/**
 * A purl as a matching key: type, namespace, name and version, without qualifiers (`?arch=…&distro=…`) or subpath, so
 * the same package named by two tools matches. Null for text that is not a purl, or a purl without a version (it
 * would name every version of the package).
 */
export function purlKey(purl: string): string | null {
  try {
    const p = PackageURL.fromString(purl.trim());
    if (!p.version) return null;
    return new PackageURL(p.type, p.namespace, p.name, p.version, undefined, undefined).toString();
  } catch {
    return null;
  }
}

/** A purl's package without its version, qualifiers or subpath (`pkg:maven/org.apache/log4j-core`); null if not a purl. */
export function purlPackage(purl: string): string | null {
  try {
    const p = PackageURL.fromString(purl.trim());
    return new PackageURL(p.type, p.namespace, p.name, undefined, undefined, undefined).toString();
  } catch {
    return null;
  }
}

/** The version of a purl, null when it has none or is not a purl. */
export function purlVersion(purl: string): string | null {
  try {
    return PackageURL.fromString(purl.trim()).version ?? null;
  } catch {
    return null;
  }
}

/**
 * Whether a version is one a `versions` product lists: the same text as a listed version, or in one of its ranges (a
 * version the range's scheme cannot read is in none).
 */
export function inVersions(version: string, product: { versions: readonly string[]; ranges: readonly string[] }) {
  if (product.versions.includes(version)) return true;
  return product.ranges.some((text) => {
    const range = parseVers(text);
    return 'scheme' in range && inVers(version, range) === true;
  });
}

/** The image digest an OCI purl names (`pkg:oci/debian@sha256%3A244f…` → `sha256:244f…`), else null. */
export function ociDigest(purl: string): string | null {
  try {
    const p = PackageURL.fromString(purl.trim());
    return p.type === 'oci' && p.version && /^sha256:[0-9a-f]{64}$/i.test(p.version) ? p.version.toLowerCase() : null;
  } catch {
    return null;
  }
}

/** A product as stored: `purl:…`, `image:sha256:…`, `asset:…`. */
export const productText = (p: VexProduct): string => {
  switch (p.kind) {
    case 'purl':
      return `purl:${p.key}`;
    case 'versions':
      // A purl without its version holds no `#` (its subpath is dropped): the lists follow one.
      return `versions:${p.package}#${JSON.stringify({ versions: p.versions, ranges: p.ranges })}`;
    case 'image':
      return `image:${p.digest}`;
    case 'asset':
      return `asset:${p.id}`;
  }
};

export function parseProduct(text: string): VexProduct {
  const colon = text.indexOf(':');
  const kind = text.slice(0, colon);
  const value = text.slice(colon + 1);
  if (kind === 'image') return { kind: 'image', digest: value };
  if (kind === 'asset') return { kind: 'asset', id: value };
  if (kind === 'versions') {
    const hash = value.indexOf('#');
    const lists = JSON.parse(value.slice(hash + 1)) as { versions: string[]; ranges: string[] };
    return { kind: 'versions', package: value.slice(0, hash), versions: lists.versions, ranges: lists.ranges };
  }
  return { kind: 'purl', key: value };
}

/**
 * The statements that stand: on each (vulnerability, product), the one with the latest timestamp (the later one in
 * the document on a tie or without timestamps).
 */
export function latestStatements(statements: readonly VexStatement[]): VexStatement[] {
  const latest = new Map<string, VexStatement>();
  for (const s of statements) {
    const key = `${s.vulnerabilityId}\u0000${productText(s.product)}`;
    const current = latest.get(key);
    if (!current || (s.timestamp ?? '') >= (current.timestamp ?? '')) latest.set(key, s);
  }
  return [...latest.values()];
}

/** A stable exemption id per (tenant, document, vulnerability): reloading a document replaces its exemptions. */
export const vexExemptionId = (tenantId: string, documentId: string, vulnerabilityId: string): string =>
  uuidV5(`vex|${documentId}|${vulnerabilityId}`, tenantId);

/**
 * The exemption of a document's statements on one vulnerability, given the assets their products matched (never
 * empty: a rule without `assetIds` would match every asset). One rule per id of the vulnerability (its own and its
 * aliases), each limited to the assets; named after the document and the vulnerability; the latest statement's
 * justification (else its status) and detail as the reason.
 */
export function vexExemption(
  documentId: string,
  vulnerabilityId: string,
  statements: readonly VexStatement[],
  assetIds: readonly string[],
): Exemption {
  const latest = [...statements].sort((a, b) => (a.timestamp ?? '').localeCompare(b.timestamp ?? '')).at(-1);
  const ids = [...new Set([vulnerabilityId, ...statements.flatMap((s) => s.aliases)])];
  const reason = latest ? [latest.justification ?? latest.status, latest.detail].filter(Boolean).join(': ') : null;
  const created = statements.map((s) => s.timestamp).filter((t): t is string => t !== null);
  const updated = statements.map((s) => s.updatedAt ?? s.timestamp).filter((t): t is string => t !== null);
  return {
    name: `${documentId} · ${vulnerabilityId}`,
    reason,
    createdAt: created.length > 0 ? created.sort()[0]! : null,
    updatedAt: updated.length > 0 ? updated.sort().at(-1)! : null,
    rules: ids.map((id) => ({
      exemptionType: 'vex',
      vulnerabilityId: id,
      vulnerabilityIds: null,
      assetIds: [...assetIds].sort(),
      assetGroupIds: null,
      assetRegions: null,
      assetTags: null,
      noVendorFix: false,
    })),
  };
}
