// Rules for turning scanner output into inventory records, shared by every ingest format (docs/INGEST.md): severity
// words, where a container image lives, what its asset is called, and how a package type is classed.
import { createHash } from 'node:crypto';
import type { FindingSeverity, Provider } from './enums.js';
import { MAX_ID_LENGTH } from './ids.js';
import { utf8Bytes } from './limits.js';

/**
 * A scanner's severity word as the contract's enum, in any letter case: Trivy's and Grype's four levels as they are;
 * Grype `Negligible` and CycloneDX `info` are rated below LOW, so INFORMATIONAL; anything else (unknown, none, missing,
 * another word) is UNKNOWN.
 */
export function mapSeverity(value: unknown): FindingSeverity {
  if (typeof value !== 'string') return 'UNKNOWN';
  switch (value.trim().toLowerCase()) {
    case 'critical':
      return 'CRITICAL';
    case 'high':
      return 'HIGH';
    case 'medium':
    case 'moderate':
      return 'MEDIUM';
    case 'low':
      return 'LOW';
    case 'negligible':
    case 'info':
    case 'informational':
      return 'INFORMATIONAL';
    default:
      return 'UNKNOWN';
  }
}

export interface RegistryLocation {
  provider: Provider;
  region: string | null;
  /** The cloud account that owns the registry, when the host names it (ECR). */
  accountId: string | null;
}

/**
 * Where a container image lives, told by its registry host: ECR `ACCOUNT.dkr.ecr.REGION.amazonaws.com` is AWS in that
 * region and account, `*.azurecr.io` Azure, `gcr.io` (and `us.gcr.io`…) and `REGION-docker.pkg.dev` GCP. Null for any
 * other registry (Docker Hub, ghcr.io, cgr.dev…), whose images say nothing about a cloud.
 */
export function registryLocation(imageReference: string): RegistryLocation | null {
  const slash = imageReference.indexOf('/');
  if (slash < 0) return null;
  const host = imageReference.slice(0, slash).toLowerCase();
  const ecr = /^(\d{12})\.dkr\.ecr(?:-fips)?\.([a-z0-9-]+)\.amazonaws\.com(?:\.cn)?(?::\d+)?$/.exec(host);
  if (ecr) return { provider: 'AWS', region: ecr[2] ?? null, accountId: ecr[1] ?? null };
  if (/^[a-z0-9-]+\.azurecr\.io(?::\d+)?$/.test(host)) return { provider: 'Azure', region: null, accountId: null };
  if (/^(?:[a-z]+\.)?gcr\.io(?::\d+)?$/.test(host)) return { provider: 'GCP', region: null, accountId: null };
  const artifactRegistry = /^([a-z0-9-]+)-docker\.pkg\.dev(?::\d+)?$/.exec(host);
  if (artifactRegistry) return { provider: 'GCP', region: artifactRegistry[1] ?? null, accountId: null };
  return null;
}

/** The resource type of a container image asset on each provider (`service` is its first two parts). */
export const IMAGE_TYPES: Readonly<Record<Provider, string>> = {
  AWS: 'AWS::ECR::Image',
  Azure: 'Azure::ContainerRegistry::Image',
  GCP: 'GCP::ArtifactRegistry::Image',
  Kubernetes: 'Kubernetes::Core::ContainerImage',
};

/** `Provider::Service` of a `Provider::Service::Type` resource type. */
export const serviceOf = (type: string): string => type.split('::').slice(0, 2).join('::');

/** Characters a scanned resource id keeps as they are (a subset of what src/domain/ids.ts allows). */
const ID_SAFE = /[^A-Za-z0-9._:/@+=-]/g;
const shortHash = (text: string): string => createHash('sha256').update(text).digest('hex').slice(0, 12);

/**
 * The stable id of a scanned asset: `sirn:assets:<tenantId>:<provider>:<service>:<type>:<region>:<resourceId>`,
 * provider, service and type lower-case, `global` without a region, so a re-scan of the same artifact lands on the
 * same asset. A resource id with characters an id may not hold has them replaced by `_` and a short hash of the
 * original appended, so two keys that differ only there stay apart; an id that would pass 1024 bytes is cut and
 * hashed the same way.
 */
export function scannedAssetId(parts: {
  tenantId: string;
  type: string;
  region: string | null;
  resourceId: string;
}): string {
  const [provider = '', service = '', resource = ''] = parts.type.split('::');
  const prefix = ['sirn', 'assets', parts.tenantId, provider, service, resource].map((s) => s.toLowerCase()).join(':');
  const head = `${prefix}:${(parts.region ?? 'global').replace(ID_SAFE, '_')}:`;
  const safe = parts.resourceId.replace(ID_SAFE, '_');
  const id = safe === parts.resourceId ? head + safe : `${head}${safe}~${shortHash(parts.resourceId)}`;
  if (utf8Bytes(id) <= MAX_ID_LENGTH) return id;
  // The resource id is ASCII by now; the head may not be (a tenant id), and the limit is in bytes.
  const suffix = `~${shortHash(parts.resourceId)}`;
  return head + safe.slice(0, MAX_ID_LENGTH - utf8Bytes(head) - suffix.length) + suffix;
}

/** OS package types; every other package type (npm, jar, gem, python, go, binary…) is a language package. */
const OS_PACKAGE_TYPES = new Set(['apk', 'deb', 'rpm', 'alpm', 'portage', 'dpkg']);

/** A package's targetClass in Trivy's words: `os-pkgs` or `lang-pkgs`. */
export const targetClassOf = (packageType: string): 'os-pkgs' | 'lang-pkgs' =>
  OS_PACKAGE_TYPES.has(packageType.toLowerCase()) ? 'os-pkgs' : 'lang-pkgs';

/** Grype's package types in Trivy's words, so both scanners' packages read alike; OS packages take the distro's name. */
export function grypeTargetType(type: string | null, distro: string | null): string | null {
  if (type === null) return null;
  if (targetClassOf(type) === 'os-pkgs') return distro ?? type;
  return ({ 'java-archive': 'jar', gem: 'gemspec' } as Record<string, string>)[type] ?? type;
}

/** A CWE as the finding's `cwes` entry, from `CWE-79`, `79` or 79; a non-numeric id (`NVD-CWE-Other`) stays as given. */
export function cweEntry(cwe: string | number, source: string | null) {
  const number = String(cwe).trim().replace(/^CWE-/i, '');
  const numeric = /^\d+$/.test(number);
  return {
    id: numeric ? `CWE-${number}` : String(cwe).trim(),
    name: null,
    cweId: numeric ? number : null,
    source,
    sourceUrl: numeric ? `https://cwe.mitre.org/data/definitions/${number}.html` : null,
    description: null,
  };
}
