// Vulnerability findings: a pool of advisories per package ecosystem (built once per seed), drawn from per asset.
import type { FindingSeverity } from '../domain/enums.js';
import {
  CWES,
  ECOSYSTEMS,
  EXPLOIT_SOURCES,
  FAMOUS_CVES,
  LANGUAGE_TARGETS,
  PACKAGES,
  SEVERITY_SOURCES,
  WEAKNESS_PHRASES,
  type Ecosystem,
  type PackageSpec,
} from './catalog.js';
import {
  alnum,
  at,
  chance,
  createRng,
  dateBetween,
  hex,
  int,
  isoDate,
  isoTime,
  pick,
  sample,
  stochasticRound,
  weighted,
  weightedPicker,
  type Rng,
} from './random.js';
import { DAY, HOUR, type Settings } from './settings.js';
import { type Tenant } from './tenants.js';
import { type AssetCore } from './identity.js';
import { type BuiltAsset, type ScanProfile } from './assets.js';

interface Advisory {
  vulnerabilityId: string;
  ecosystem: Ecosystem;
  pkg: PackageSpec;
  installedVersion: string;
  /** '' when no fix exists; undefined when the scanner reports no fixedVersion at all. */
  fixedVersion: string | undefined;
  severityLevel: FindingSeverity;
  severitySource: string;
  title: string;
  description: string;
  publishedMs: number;
  publishedDate: string;
  primaryUrl: string;
  cwes: readonly Record<string, string>[];
  hasKev: boolean;
  knownExploit: Record<string, string> | null;
  hasExploit: boolean;
  exploits: readonly Record<string, string>[];
  isExploitable: boolean;
}

export type Pools = Readonly<Record<Ecosystem, readonly Advisory[]>>;

const pickSeverity = weightedPicker<FindingSeverity>([
  ['CRITICAL', 7],
  ['HIGH', 25],
  ['MEDIUM', 40],
  ['LOW', 18],
  ['INFORMATIONAL', 3],
  ['UNKNOWN', 7],
]);
/** Chance of being in the known-exploited catalogue by severity: about 3% of advisories overall. */
const KEV_RATE: Readonly<Record<FindingSeverity, number>> = {
  CRITICAL: 0.2,
  HIGH: 0.06,
  MEDIUM: 0.015,
  LOW: 0,
  INFORMATIONAL: 0,
  UNKNOWN: 0,
};
const IMPACT: Readonly<Record<FindingSeverity, string>> = {
  CRITICAL: 'A remote, unauthenticated attacker could execute arbitrary code.',
  HIGH: 'An attacker could corrupt memory, leading to a crash or to code execution.',
  MEDIUM: 'Under specific conditions an attacker could cause a denial of service or read sensitive data.',
  LOW: 'The impact is limited to local users or unusual configurations.',
  INFORMATIONAL: 'This is a hardening issue without a direct security impact.',
  UNKNOWN: 'The impact has not been rated yet.',
};
const CWE_OBJECTS: ReadonlyMap<string, Record<string, string>> = new Map(
  CWES.map((c) => [
    c.id,
    {
      id: `CWE-${c.id}`,
      name: c.name,
      cweId: c.id,
      source: 'NVD',
      sourceUrl: `https://cwe.mitre.org/data/definitions/${c.id}.html`,
      description: c.description,
    },
  ]),
);
const cweObject = (id: string): Record<string, string> => {
  const cwe = CWE_OBJECTS.get(id);
  if (!cwe) throw new RangeError(`unknown CWE ${id} in the catalog`);
  return cwe;
};

export function buildPools(s: Settings): Pools {
  const rng = createRng(s.seed, 'advisories');
  const used = new Set<string>();
  // Large enough that an asset's findings are distinct advisories and a single one stays rare across the inventory.
  const size = Math.max(400, Math.ceil(s.findingsPerAsset * 12));
  const pools = {} as Record<Ecosystem, Advisory[]>;
  for (const ecosystem of ECOSYSTEMS) {
    const pool: Advisory[] = [];
    for (const famous of FAMOUS_CVES) {
      if (famous.ecosystem !== ecosystem || Date.parse(famous.published) >= s.now) continue;
      used.add(famous.id);
      pool.push(famousAdvisory(rng, famous));
    }
    while (pool.length < size) pool.push(syntheticAdvisory(s, rng, ecosystem, used));
    pools[ecosystem] = pool;
  }
  return pools;
}

function famousAdvisory(rng: Rng, famous: (typeof FAMOUS_CVES)[number]): Advisory {
  const spec = PACKAGES[famous.ecosystem].find((p) => p.name === famous.packageName);
  if (!spec) throw new RangeError(`package ${famous.packageName} of ${famous.id} is not in the catalog`);
  const [installedVersion, fixedVersion] = at(spec.versions, 0);
  const publishedMs = Date.parse(`${famous.published}T00:00:00.000Z`) + int(rng, 0, 20) * HOUR;
  const knownExploit = famous.kev
    ? {
        cveID: famous.id,
        notes: `https://nvd.nist.gov/vuln/detail/${famous.id}`,
        product: famous.kev.product,
        vendorProject: famous.kev.vendorProject,
        requiredAction:
          'Apply mitigations per vendor instructions or discontinue use of the product if mitigations are unavailable.',
        shortDescription: famous.title,
        vulnerabilityName: famous.kev.vulnerabilityName,
        dueDate: famous.kev.dueDate,
        dateAdded: famous.kev.dateAdded,
      }
    : null;
  const hasExploit = famous.kev !== null || chance(rng, 0.3);
  return {
    vulnerabilityId: famous.id,
    ecosystem: famous.ecosystem,
    pkg: spec,
    installedVersion,
    fixedVersion,
    severityLevel: famous.severity,
    severitySource: 'nvd',
    title: famous.title,
    description: `${famous.title}. ${IMPACT[famous.severity]} This issue is fixed in version ${fixedVersion}.`,
    publishedMs,
    publishedDate: isoTime(publishedMs),
    primaryUrl: `https://nvd.nist.gov/vuln/detail/${famous.id}`,
    cwes: [cweObject(famous.cwe)],
    hasKev: famous.kev !== null,
    knownExploit,
    hasExploit,
    exploits: hasExploit ? exploitsOf(rng, famous.id, famous.packageName, famous.title) : [],
    isExploitable: true,
  };
}

function syntheticAdvisory(s: Settings, rng: Rng, ecosystem: Ecosystem, used: Set<string>): Advisory {
  const publishedMs = s.now - int(rng, 20 * DAY, 8 * 365 * DAY);
  const year = new Date(publishedMs).getUTCFullYear();
  let vulnerabilityId: string;
  do vulnerabilityId = `CVE-${year}-${int(rng, 10000, 52999)}`;
  while (used.has(vulnerabilityId));
  used.add(vulnerabilityId);

  const severityLevel = pickSeverity(rng);
  const spec = pick(rng, PACKAGES[ecosystem]);
  const [installedVersion, fixed] = pick(rng, spec.versions);
  const fix = weighted(rng, [
    ['fixed', 88],
    ['none', 9],
    ['absent', 3],
  ] as const);
  const fixedVersion = fix === 'fixed' ? fixed : fix === 'none' ? '' : undefined;
  const cwe = pick(rng, CWES);
  const cwes = chance(rng, 0.15)
    ? [
        cweObject(cwe.id),
        cweObject(
          pick(
            rng,
            CWES.filter((c) => c.id !== cwe.id),
          ).id,
        ),
      ]
    : [cweObject(cwe.id)];
  const phrase = WEAKNESS_PHRASES[cwe.id] ?? 'vulnerability';
  const area = pick(rng, spec.areas);
  const title = `${spec.name}: ${phrase} in ${area}`;
  const description =
    `A ${phrase} flaw was found in ${spec.name} in ${area}. ${IMPACT[severityLevel]} ` +
    (fix === 'fixed' ? `This issue is fixed in version ${fixed}.` : 'No fixed version is available yet.');
  const severitySource = pick(rng, SEVERITY_SOURCES[ecosystem]);
  const primaryUrl =
    severitySource === 'ghsa'
      ? `https://github.com/advisories/GHSA-${alnum(rng, 4)}-${alnum(rng, 4)}-${alnum(rng, 4)}`
      : `https://avd.aquasec.com/nvd/${vulnerabilityId.toLowerCase()}`;

  const hasKev = chance(rng, KEV_RATE[severityLevel]);
  let knownExploit: Record<string, string> | null = null;
  if (hasKev) {
    const added = Math.min(s.now - DAY, publishedMs + int(rng, DAY, 90 * DAY));
    knownExploit = {
      cveID: vulnerabilityId,
      notes: `https://nvd.nist.gov/vuln/detail/${vulnerabilityId}`,
      product: spec.name,
      vendorProject: spec.vendor,
      requiredAction:
        'Apply mitigations per vendor instructions or discontinue use of the product if mitigations are unavailable.',
      shortDescription: description,
      vulnerabilityName: `${spec.vendor} ${spec.name} ${phrase.replace(/\b\w/g, (ch) => ch.toUpperCase())} Vulnerability`,
      dueDate: isoDate(added + 21 * DAY),
      dateAdded: isoDate(added),
    };
  }
  const hasExploit = chance(rng, hasKev ? 0.7 : 0.09);
  return {
    vulnerabilityId,
    ecosystem,
    pkg: spec,
    installedVersion,
    fixedVersion,
    severityLevel,
    severitySource,
    title,
    description,
    publishedMs,
    publishedDate: isoTime(publishedMs),
    primaryUrl,
    cwes,
    hasKev,
    knownExploit,
    hasExploit,
    exploits: hasExploit ? exploitsOf(rng, vulnerabilityId, spec.name, title) : [],
    isExploitable: hasKev || chance(rng, 0.3),
  };
}

function exploitsOf(rng: Rng, cve: string, packageName: string, title: string): Record<string, string>[] {
  return sample(rng, EXPLOIT_SOURCES, int(rng, 1, 3)).map(([source, base]) => {
    switch (source) {
      case 'Exploit-DB': {
        const n = int(rng, 40000, 52500);
        return {
          id: `EDB-${n}`,
          title: `${packageName} - ${title.split(': ')[1] ?? 'exploit'}`,
          description: `Proof of concept for ${cve}.`,
          source,
          sourceUrl: `${base}${n}`,
        };
      }
      case 'GitHub': {
        const repo = `${pick(rng, ['h4x0r-sec', 'offsec-lab', 'vulnresearch', 'cve-pocs', 'redteam-tools'])}/${cve.toLowerCase()}-poc`;
        return {
          id: `GH-${hex(rng, 8)}`,
          title: `${cve} proof of concept`,
          description: `Public proof-of-concept exploit for ${cve} in ${packageName}.`,
          source,
          sourceUrl: `${base}${repo}`,
        };
      }
      case 'Metasploit': {
        const module = `exploit/multi/misc/${packageName.replace(/[^a-z0-9]/gi, '_').toLowerCase()}_${cve.slice(4).replace('-', '_')}`;
        return {
          id: module,
          title: `${packageName} ${cve} module`,
          description: `Metasploit module exploiting ${cve}.`,
          source,
          sourceUrl: `${base}${module}/`,
        };
      }
      default: {
        const n = int(rng, 170000, 180000);
        return {
          id: `PS-${n}`,
          title: `${packageName} ${cve}`,
          description: `Exploit for ${cve} published on Packet Storm.`,
          source,
          sourceUrl: `${base}${n}`,
        };
      }
    }
  });
}

const pickLocations = weightedPicker([
  [1, 70],
  [2, 20],
  [3, 10],
] as const);
/** Share of assets whose scan found nothing although they have packages. */
const CLEAN_SHARE = 0.08;

/** The findings of one asset: distinct advisories from the ecosystems present on it. */
export function findingsOf(s: Settings, pools: Pools, tenant: Tenant, asset: BuiltAsset): Record<string, unknown>[] {
  const { core, scan } = asset;
  if (scan.ecosystems.length === 0 || core.kind.findingsWeight === 0 || s.findingsPerAsset === 0) return [];
  const rng = createRng(s.seed, 'findings', tenant.index, core.index);
  if (chance(rng, CLEAN_SHARE)) return [];
  // Uniform between 0 and twice the asset's mean; the means average out to findingsPerAsset over the tenant's mix.
  const mean = (s.findingsPerAsset * core.kind.findingsWeight) / tenant.meanFindingsWeight / (1 - CLEAN_SHARE);
  const available = scan.ecosystems.reduce((sum, e) => sum + pools[e].length, 0);
  const count = Math.min(Math.floor(available / 2), stochasticRound(rng, mean * 2 * rng()));
  // The OS pool weighs a little more: base images carry most of a workload's vulnerable packages.
  const pickEcosystem = weightedPicker(
    scan.ecosystems.map((e, i) => [e, i === 0 && scan.os?.ecosystem === e ? 3 : 2] as const),
  );
  const chosen = new Set<string>();
  const lastObservedAt = isoTime(asset.lastObservedMs);
  const executionId = String(asset.executionId);
  const out: Record<string, unknown>[] = [];
  for (let attempt = 0; out.length < count && attempt < count * 20; attempt++) {
    const ecosystem = pickEcosystem(rng);
    const advisory = pick(rng, pools[ecosystem]);
    if (chosen.has(advisory.vulnerabilityId)) continue;
    chosen.add(advisory.vulnerabilityId);
    const earliest = Math.min(asset.lastObservedMs, Math.max(asset.firstObservedMs, advisory.publishedMs));
    out.push({
      schemaVersion: asset.schemaVersion,
      assetId: core.id,
      organizationId: tenant.organizationId,
      tenantId: tenant.tenantId,
      integrationId: core.integrationId,
      vulnerabilityId: advisory.vulnerabilityId,
      provider: core.kind.provider,
      assetType: core.type,
      description: advisory.description,
      title: advisory.title,
      severityLevel: advisory.severityLevel,
      severitySource: advisory.severitySource,
      firstObservedAt: isoTime(dateBetween(rng, earliest, asset.lastObservedMs)),
      lastObservedAt,
      publishedDate: advisory.publishedDate,
      executionId,
      targetName: scan.targetName,
      primaryUrl: advisory.primaryUrl,
      packages: packagesOf(rng, advisory, scan, core),
      cwes: advisory.cwes,
      hasKev: advisory.hasKev,
      hasExploit: advisory.hasExploit,
      knownExploit: advisory.knownExploit,
      exploits: advisory.exploits,
      isExploitable: advisory.isExploitable,
    });
  }
  return out;
}

interface PackageEntry {
  packageName: string;
  targetName: string;
  targetType: string;
  targetPath: string;
  targetClass: string;
  fixedVersion?: string;
  installedVersion: string;
}

function packagesOf(rng: Rng, advisory: Advisory, scan: ScanProfile, core: AssetCore): PackageEntry[] {
  const locations = pickLocations(rng);
  const { pkg: spec, installedVersion, fixedVersion } = advisory;
  const entry = (
    packageName: string,
    targetName: string,
    targetType: string,
    targetPath: string,
    targetClass: string,
  ): PackageEntry =>
    fixedVersion === undefined
      ? { packageName, targetName, targetType, targetPath, targetClass, installedVersion }
      : { packageName, targetName, targetType, targetPath, targetClass, fixedVersion, installedVersion };
  const root = scan.appRoot;
  switch (advisory.ecosystem) {
    case 'deb':
    case 'apk': {
      // OS packages: the vulnerable source package and the binaries built from it.
      const path = advisory.ecosystem === 'deb' ? 'var/lib/dpkg/status' : 'lib/apk/db/installed';
      return [spec.name, ...spec.companions]
        .slice(0, locations)
        .map((name) => entry(name, scan.osTarget, scan.os?.targetType ?? advisory.ecosystem, path, 'os-pkgs'));
    }
    case 'npm': {
      const parent = pick(rng, PACKAGES.npm).name;
      return [
        `${root}/node_modules/${spec.name}/package.json`,
        `${root}/node_modules/${parent}/node_modules/${spec.name}/package.json`,
        `${root}/packages/${core.component}/node_modules/${spec.name}/package.json`,
      ]
        .slice(0, locations)
        .map((path) => entry(spec.name, LANGUAGE_TARGETS.npm, 'npm', path, 'lang-pkgs'));
    }
    case 'jar':
      return [
        `${root}/lib/${spec.name}-${installedVersion}.jar`,
        `${root}/BOOT-INF/lib/${spec.name}-${installedVersion}.jar`,
        `${root}/plugins/${core.component}/${spec.name}-${installedVersion}.jar`,
      ]
        .slice(0, locations)
        .map((path) => entry(spec.name, LANGUAGE_TARGETS.jar, 'jar', path, 'lang-pkgs'));
    default:
      return [
        `usr/local/lib/python3.11/site-packages/${spec.name}-${installedVersion}.dist-info/METADATA`,
        `${root}/.venv/lib/python3.11/site-packages/${spec.name}-${installedVersion}.dist-info/METADATA`,
        `opt/venv/lib/python3.12/site-packages/${spec.name}-${installedVersion}.dist-info/METADATA`,
      ]
        .slice(0, locations)
        .map((path) => entry(spec.name, LANGUAGE_TARGETS['python-pkg'], 'python-pkg', path, 'lang-pkgs'));
  }
}
