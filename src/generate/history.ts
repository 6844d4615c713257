// A deterministic scan history behind `secinv demo`: weekly Trivy reports (JSON text, as `trivy image --format json`
// writes them) of a few dozen container images per tenant, ending at the inventory's `now`. Each scan of an image
// drops some of the CVEs its previous scan reported (fixed: a re-scan resolves them) and adds new ones, so the
// remediation metrics have openings and resolutions to show; the critical and high ones left open past their SLA
// make the overdue count. Every image's story is a pure function of (seed, tenant index, image index), with the
// advisories of the inventory's own pool, so the same options give the same reports byte for byte.
import type { FindingSeverity } from '../domain/enums.js';
import { APPS, COMPONENTS, CONTAINER_RELEASES, LANGUAGE_TARGETS, type Ecosystem } from './catalog.js';
import { buildPools, type Pools } from './findings.js';
import { chance, createRng, hex, int, isoTime, pick, weighted, weightedPicker } from './random.js';
import { DAY, settingsOf, type GenerateOptions, type Settings } from './settings.js';
import { buildTenant, type Tenant } from './tenants.js';

export interface HistoryOptions {
  /** Container images scanned per tenant. */
  images: number;
  /** Weekly scans of each image; the last one at the inventory's `now`. */
  weeks: number;
}

/** One tenant's scans of one week: a report per image, ingested together at `at` (the scans' time). */
export interface HistoryScan {
  tenantId: string;
  at: string;
  reports: { name: string; text: string }[];
}

type Advisory = Pools[Ecosystem][number];

/** Chance that a scan no longer reports a CVE the previous scan did: critical ones are fixed first. */
const FIX_RATE: Readonly<Record<FindingSeverity, number>> = {
  CRITICAL: 0.35,
  HIGH: 0.2,
  MEDIUM: 0.1,
  LOW: 0.06,
  INFORMATIONAL: 0.06,
  UNKNOWN: 0.06,
};
/** New CVEs per image and week. */
const ARRIVALS = [
  [0, 60],
  [1, 30],
  [2, 10],
] as const;
const LANGUAGES = ['npm', 'jar', 'python-pkg'] as const;
const pickRelease = weightedPicker(CONTAINER_RELEASES);

interface Image {
  reference: string;
  repository: string;
  digest: string;
  release: (typeof CONTAINER_RELEASES)[number][0];
  ecosystems: readonly Ecosystem[];
  /** The advisories each weekly scan reports, oldest scan first. */
  weeks: readonly (readonly Advisory[])[];
}

const scanTimes = (s: Settings, h: HistoryOptions, tenant: Tenant): number[] =>
  // A tenant's scans run a few minutes after the previous tenant's, all at or before `now`.
  Array.from({ length: h.weeks }, (_, w) => s.now - (h.weeks - 1 - w) * 7 * DAY - tenant.index * 5 * 60_000);

/** One image's reference and the advisories of each of its weekly scans. */
function buildImage(s: Settings, pools: Pools, tenant: Tenant, index: number, times: readonly number[]): Image {
  const rng = createRng(s.seed, 'history-image', tenant.index, index);
  const account = tenant.byProvider.AWS[0]?.accountNumber ?? 123456789012;
  const region = pick(rng, tenant.byProvider.AWS[0]?.regions ?? ['us-east-1']);
  const name = `${APPS[index % APPS.length]}-${pick(rng, COMPONENTS)}`;
  const repository = `${account}.dkr.ecr.${region === 'global' ? 'us-east-1' : region}.amazonaws.com/${name}`;
  const release = pickRelease(rng);
  const ecosystems: Ecosystem[] = [release.ecosystem ?? 'deb', pick(rng, LANGUAGES)];
  const used = new Set<string>();
  // A CVE the image has had once is never drawn again for it: a fix stays a fix in this story.
  const draw = (at: number): Advisory | undefined => {
    for (let attempt = 0; attempt < 20; attempt++) {
      const advisory = pick(rng, pools[pick(rng, ecosystems)]);
      if (used.has(advisory.vulnerabilityId) || advisory.publishedMs > at) continue;
      used.add(advisory.vulnerabilityId);
      return advisory;
    }
    return undefined;
  };
  const weeks: Advisory[][] = [];
  let current: Advisory[] = [];
  times.forEach((at, w) => {
    const arrivals = w === 0 ? int(rng, 1, 6) : weighted(rng, ARRIVALS);
    current = current.filter((a) => !chance(rng, FIX_RATE[a.severityLevel]));
    for (let i = 0; i < arrivals; i++) {
      const advisory = draw(at);
      if (advisory) current.push(advisory);
    }
    weeks.push(current);
  });
  return {
    reference: `${repository}:${int(rng, 1, 4)}.${int(rng, 0, 24)}.${int(rng, 0, 30)}`,
    repository,
    digest: hex(rng, 64),
    release,
    ecosystems,
    weeks,
  };
}

/** A Trivy row; Trivy leaves out FixedVersion when there is no fix. */
const row = (a: Advisory) => ({
  VulnerabilityID: a.vulnerabilityId,
  PkgName: a.pkg.name,
  InstalledVersion: a.installedVersion,
  ...(a.fixedVersion ? { FixedVersion: a.fixedVersion } : {}),
  Severity: a.severityLevel === 'INFORMATIONAL' ? 'NEGLIGIBLE' : a.severityLevel,
  SeveritySource: a.severitySource,
  PrimaryURL: a.primaryUrl,
  Title: a.title,
  Description: a.description,
  PublishedDate: a.publishedDate,
  CweIDs: a.cwes.map((c) => c.id),
});

/** The report of one image's scan at `at`, as `trivy image --format json` writes it. */
function report(image: Image, advisories: readonly Advisory[], at: number): string {
  const [os, language] = image.ecosystems as [Ecosystem, Ecosystem];
  const osTarget = `${image.reference} (${image.release.targetType} ${image.release.version})`;
  const languageTarget = LANGUAGE_TARGETS[language as keyof typeof LANGUAGE_TARGETS];
  return JSON.stringify({
    SchemaVersion: 2,
    CreatedAt: isoTime(at),
    ArtifactName: image.reference,
    ArtifactType: 'container_image',
    Metadata: {
      OS: { Family: image.release.targetType, Name: image.release.version },
      RepoTags: [image.reference],
      RepoDigests: [`${image.repository}@sha256:${image.digest}`],
    },
    Results: [
      {
        Target: osTarget,
        Class: 'os-pkgs',
        Type: image.release.targetType,
        Vulnerabilities: advisories.filter((a) => a.ecosystem === os).map(row),
      },
      {
        Target: languageTarget,
        Class: 'lang-pkgs',
        Type: language,
        Vulnerabilities: advisories.filter((a) => a.ecosystem === language).map(row),
      },
    ],
  });
}

/**
 * The history's scans in the order they are to be ingested: week by week, and within a week tenant by tenant. The
 * tenants are the inventory's (`generateRecords` with the same options); the images are assets of their own, which
 * the first scan creates.
 */
export function* scanHistory(opts: GenerateOptions, h: HistoryOptions): Generator<HistoryScan> {
  const s = settingsOf(opts);
  const pools = buildPools(s);
  const tenants = Array.from({ length: s.tenants }, (_, t) => {
    const tenant = buildTenant(s, t);
    const times = scanTimes(s, h, tenant);
    // Each image has a digest of its own, hence an asset of its own (the id follows from it).
    const images = Array.from({ length: h.images }, (_, i) => buildImage(s, pools, tenant, i, times));
    return { tenant, times, images };
  });
  for (let w = 0; w < h.weeks; w++) {
    for (const { tenant, times, images } of tenants) {
      const at = times[w]!;
      yield {
        tenantId: tenant.tenantId,
        at: isoTime(at),
        reports: images.map((image, i) => ({
          name: `${image.repository.split('/').pop()!}-${i}-${isoTime(at).slice(0, 10)}.json`,
          text: report(image, image.weeks[w]!, at),
        })),
      };
    }
  }
}
