// A scan as every reader produces it, whatever the scanner: the artifact scanned, its findings already merged one per
// vulnerability id, its secrets and its configuration checks. src/ingest/apply.ts turns it into inventory records.
import type { FailedCheck } from '../domain/checks.js';
import { severityLevelValues, type FindingSeverity, type Provider } from '../domain/enums.js';
import { grypeTargetType } from '../domain/scan.js';
import type { VexDocument } from '../domain/vex.js';
import { openScratch, type Scratch } from '../storage/db/scratch.js';

export interface ScanPackage {
  packageName: string | null;
  installedVersion: string | null;
  fixedVersion: string | null;
  targetName: string | null;
  targetType: string | null;
  targetPath: string | null;
  targetClass: string | null;
  /** The package's purl as the report gives it (not an API field: it matches VEX statements). */
  purl: string | null;
}

export interface ScanFinding {
  vulnerabilityId: string;
  title: string | null;
  description: string | null;
  severity: FindingSeverity;
  severitySource: string | null;
  publishedDate: string | null;
  primaryUrl: string | null;
  cwes: string[];
  /** Each package once, in the order first seen. */
  packages: ScanPackage[];
  /** Every CVSS vector of the finding (any version), for isExploitable. */
  vectors: string[];
  /** Other ids of the same flaw (Grype `relatedVulnerabilities`, Trivy `VendorIDs`), for the feed joins. */
  aliases: string[];
  /** Where the first row of the finding was in the report (`$.Results[0].Vulnerabilities[3]`). */
  location: string;
}

/** What was scanned: a container image (which becomes or updates an asset), or something that needs `--asset`. */
export type ScannedArtifact =
  | {
      kind: 'image';
      /** The reference as scanned (`registry/repo:tag`), the asset's name. */
      reference: string;
      /** The asset's resource id: repository and digest when the report has one, else the reference. */
      resourceId: string;
      imageId: string | null;
      resourceName: string | null;
      operatingSystem: {
        name: string | null;
        version: string | null;
        architecture: string | null;
        platform: string | null;
      } | null;
      rawData: Record<string, unknown>;
    }
  | {
      /** A resource the report names in full (a Kubernetes workload): its asset follows from these fields. */
      kind: 'resource';
      provider: Provider;
      type: string;
      region: string | null;
      resourceId: string;
      name: string;
      rawData: Record<string, unknown>;
      /** The cloud account (all digits: an AWS account id), the asset's `providerAccountId`. */
      accountId?: string | null;
      /** The resource's tags as the report gives them; absent or empty: the asset keeps the tags it has. */
      tags?: { Key: string; Value: string | null }[];
    }
  | { kind: 'other'; description: string };

export interface ScanSecret {
  severity: FindingSeverity;
  entry: Record<string, unknown>;
}

/** What a scan says about its asset's configuration checks (src/domain/checks.ts, CheckResults), as a reader collects it. */
export interface ScanChecks {
  /** One failure per check id. */
  failed: Map<string, FailedCheck>;
  /** Ids of checks that passed. */
  passed: Set<string>;
  /** The report covers every check of its scanner on the asset: failures it no longer lists are resolved. */
  complete: boolean;
}

/**
 * No checks, and an incomplete report: a scanner without configuration checks (Grype, CycloneDX…) never resolves
 * another scanner's, and never its own from a report that does not run them.
 */
export const noChecks = (complete = false): ScanChecks => ({ failed: new Map(), passed: new Set(), complete });

/**
 * Adds a failed check: the first row of a check id makes the failure; a later one (the same check on another target
 * of the asset, or reported twice) only raises its severity to the highest seen.
 */
export function addFailedCheck(checks: ScanChecks, check: FailedCheck): void {
  const found = checks.failed.get(check.checkId);
  if (!found) checks.failed.set(check.checkId, check);
  else if (severityLevelValues[check.severity] > severityLevelValues[found.severity]) found.severity = check.severity;
}

export interface Scan {
  scanner: string;
  artifact: ScannedArtifact;
  /** When the scan ran, from the report; null when the report does not say. */
  scannedAt: string | null;
  /** The report's own id, when it has one. */
  reportId: string | null;
  findings: Findings;
  secrets: ScanSecret[];
  checks: ScanChecks;
  /**
   * What the report says all of, when it is not everything (trivy-operator writes findings, checks and secrets in
   * reports of their own): findings it does not cover are not resolved, secrets it does not cover stay as stored.
   */
  covers?: { findings: boolean; secrets: boolean };
}

const packageKey = (p: ScanPackage) =>
  `${p.packageName ?? ''}\u0000${p.installedVersion ?? ''}\u0000${p.targetName ?? ''}`;

/**
 * What every package of a report's findings takes, which a Grype report names only after its findings: the scanned
 * image or directory as the target, and the distro OS packages' types read as (src/domain/scan.ts, grypeTargetType).
 * Data, not a function, so that another thread can apply it too (src/ingest/prepare-thread.ts).
 */
export interface LateTarget {
  targetName: string | null;
  distro: string | null;
}

/** The finding with the late target applied to its packages. */
export function withLateTarget(finding: ScanFinding, target: LateTarget | null): ScanFinding {
  if (target === null) return finding;
  for (const p of finding.packages) {
    p.targetName = target.targetName;
    p.targetType = grypeTargetType(p.targetType, target.distro);
  }
  return finding;
}

/**
 * A scan's findings, merged one per vulnerability id as the report's rows arrive: the first row of an id makes the
 * finding; later rows add their package (once per name, installed version and target), raise the severity to the
 * highest seen and add their vectors and aliases; the other fields stay those of the first row. Up to `inMemory`
 * findings are kept as objects; past that, all of them move to a scratch file on disk as JSON, so a report of any size
 * is read in bounded memory (docs/INGEST.md, "Reading"). Only the ids stay in memory (for `has` and `keys`).
 */
export interface Findings {
  readonly size: number;
  merge(row: ScanFinding): void;
  has(vulnerabilityId: string): boolean;
  keys(): IterableIterator<string>;
  /**
   * The findings in the order of their vulnerability ids, each with the late target applied first. Written in that
   * order, a scan's findings reach each index of the findings (every one ends with the asset and vulnerability ids) as
   * a run of neighbouring keys: a 200,000-finding report in the order of its rows made each index insert a B-tree
   * descent to a page of its own, and took 19.5–20.1 s instead of 10.3–10.5 into a database that had its indexes
   * (docs/DESIGN.md §60).
   */
  values(): IterableIterator<ScanFinding>;
  /**
   * Findings on disk, each as its vulnerability id and the JSON text of its ScanFinding, in the order of `values()`,
   * and the late target still to apply to each; null while every finding is in memory.
   */
  spilled(): { entries: IterableIterator<[id: string, text: string]>; target: LateTarget | null } | null;
  /** Sets the late target (Grype's image and distro, known once its `source` is read). */
  finish(target: LateTarget): void;
  /** Frees the scratch file, if any. */
  close(): void;
}

/** Findings kept as objects before the rest go to disk: a Kubernetes report's many small scans never touch it. */
export const FINDINGS_IN_MEMORY = 10_000;

/**
 * A copy of a string that shares no memory with the text it was cut from: V8 keeps the whole parent of a sliced string
 * alive, and the ids of a 200,000-finding report, cut from the parser's chunks, kept 131 MB of them.
 */
const detached = (text: string): string => Buffer.from(text, 'utf8').toString('utf8');

/**
 * The order of SQLite's binary collation (UTF-8 bytes, which is code point order), in which the scratch file lists what
 * it holds. `<` compares UTF-16 units, which disagree past U+FFFF.
 */
export function byteOrder(a: string, b: string): number {
  for (let i = 0; i < a.length && i < b.length; i += 1) {
    const x = a.codePointAt(i) ?? 0;
    const y = b.codePointAt(i) ?? 0;
    if (x !== y) return x < y ? -1 : 1;
    if (x > 0xffff) i += 1;
  }
  return a.length - b.length;
}

export function findingSet(inMemory = FINDINGS_IN_MEMORY): Findings {
  const memory = new Map<string, ScanFinding>();
  // Every id, in first-seen order; once on disk, with the scratch row that holds its finding.
  const ids = new Map<string, number>();
  let target: LateTarget | null = null;
  let disk: Scratch | null = null;

  const combine = (found: ScanFinding, row: ScanFinding) => {
    const keys = new Set(found.packages.map(packageKey));
    for (const p of row.packages) {
      if (!keys.has(packageKey(p))) {
        keys.add(packageKey(p));
        found.packages.push(p);
      }
    }
    if (severityLevelValues[row.severity] > severityLevelValues[found.severity]) found.severity = row.severity;
    for (const vector of row.vectors) if (!found.vectors.includes(vector)) found.vectors.push(vector);
    for (const alias of row.aliases) if (!found.aliases.includes(alias)) found.aliases.push(alias);
  };
  const first = (row: ScanFinding): ScanFinding => {
    const unique = new Map<string, ScanPackage>();
    for (const p of row.packages) if (!unique.has(packageKey(p))) unique.set(packageKey(p), p);
    return {
      ...row,
      packages: [...unique.values()],
      vectors: [...new Set(row.vectors)],
      aliases: [...new Set(row.aliases)],
    };
  };
  // Objects in memory take the late target once; those read from disk are new objects every time.
  let targetDone = false;

  return {
    get size() {
      return ids.size;
    },
    merge(row) {
      const id = row.vulnerabilityId;
      if (disk === null) {
        const found = memory.get(id);
        if (found) combine(found, row);
        else memory.set(id, first(row));
        if (!ids.has(id)) ids.set(detached(id), 0);
        if (memory.size > inMemory) {
          const scratch = openScratch();
          for (const [key, finding] of memory) ids.set(key, scratch.add(JSON.stringify(finding), key));
          memory.clear();
          disk = scratch;
        }
        return;
      }
      const at = ids.get(id);
      const stored = at === undefined ? undefined : disk.get(at);
      if (at === undefined || stored === undefined) {
        const key = detached(id);
        ids.set(key, disk.add(JSON.stringify(first(row)), key));
        return;
      }
      const finding = JSON.parse(stored) as ScanFinding;
      combine(finding, row);
      disk.set(at, JSON.stringify(finding));
    },
    has: (id) => ids.has(id),
    keys: () => ids.keys(),
    *values() {
      if (disk === null) {
        if (!targetDone) for (const finding of memory.values()) withLateTarget(finding, target);
        targetDone = true;
        yield* [...memory.values()].sort((a, b) => byteOrder(a.vulnerabilityId, b.vulnerabilityId));
      } else for (const [, json] of disk.byKey()) yield withLateTarget(JSON.parse(json) as ScanFinding, target);
    },
    spilled() {
      const scratch = disk;
      if (scratch === null) return null;
      // Started when first read: the scratch's statement stays open while its rows are read, and a caller that asks
      // only whether the findings are on disk must not hold it. Each row's key is its finding's id.
      const entries = function* (): Generator<[string, string]> {
        yield* scratch.byKey();
      };
      return { entries: entries(), target };
    },
    finish: (late) => {
      target = late;
      targetDone = false;
    },
    close() {
      disk?.close();
      disk = null;
    },
  };
}

/** What a reader makes of a file: a scan (findings on an asset), VEX statements, or both. */
export interface Ingested {
  /** One scan per asset the file is about (a Kubernetes report: one per workload). */
  scans: Scan[];
  vex: VexDocument | null;
  /** Exempting statements whose product can never name an asset (a plain name, another document's product). */
  unmatchable: number;
  /** What the reader skipped without failing the file, one line each for the summary. */
  warnings?: string[];
}

/** The first sentence of a description, at most 120 characters, as a title (Grype and CycloneDX have none). */
export function firstSentence(description: string | null): string | null {
  if (description === null) return null;
  const sentence = /^(.+?[.!?])(\s|$)/.exec(description)?.[1] ?? description;
  return sentence.length <= 120 ? sentence : `${sentence.slice(0, 119)}…`;
}
