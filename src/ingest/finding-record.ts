// A scan's finding as the record the writer stores: validated by the import's rules, with its aliases and package
// purls checked against the index limits. Pure, so that the write side of a large report can run it on another thread
// (src/ingest/prepare-thread.ts) while this one writes.
import { isExploitableByVectors } from '../domain/cvss.js';
import { UserError } from '../domain/errors.js';
import type { Provider } from '../domain/enums.js';
import { LONG_KEY_BYTES, SHORT_KEY_BYTES } from '../domain/limits.js';
import type { RecordsByKind, WholeFinding } from '../domain/records.js';
import { cweEntry } from '../domain/scan.js';
import { purlKey } from '../domain/vex.js';
import { normalizeRecord } from '../input/records.js';
import { overLimit } from '../input/json.js';
import type { ScanFinding } from './scan.js';

/** What every finding of one scan shares: its asset, the scan and when it ran. */
export interface FindingContext {
  tenantId: string;
  organizationId: string;
  assetId: string;
  integrationId: string | null;
  executionId: string;
  provider: Provider;
  assetType: string;
  scanner: string;
  scannedAt: string;
}

/** A record of the kind, normalised by the import's rules; its first problem fails the file, prefixed by `what`. */
export const validated = <K extends 'asset' | 'vulnerability'>(
  kind: K,
  raw: Record<string, unknown>,
  what: string,
): RecordsByKind[K] => {
  const result = normalizeRecord(kind, raw);
  if ('problems' in result) {
    const first = result.problems[0];
    throw new UserError(`${what}: ${first?.path ?? ''} ${first?.message ?? 'is invalid'}`);
  }
  return result.value;
};

/**
 * A finding's aliases (stored upper-cased) and package purls are indexed too (src/domain/limits.ts); the rest of it is
 * checked by the import's rules. The first text over its limit fails the file, located.
 */
function checkIndexedKeys(finding: ScanFinding, purls: readonly (string | null)[]): void {
  const problems: { path: string; message: string }[] = [];
  finding.aliases.forEach((alias, i) =>
    overLimit(alias, SHORT_KEY_BYTES, `alias ${i + 1} (${alias.slice(0, 20)}…)`, problems, alias.trim().toUpperCase()),
  );
  purls.forEach((purl, i) => purl !== null && overLimit(purl, LONG_KEY_BYTES, `packages[${i}].purl`, problems));
  const [first] = problems;
  if (first) throw new UserError(`the finding at ${finding.location}: ${first.path} ${first.message}`);
}

/**
 * The record of a finding; `firstObservedAt` is when the asset's stored finding of the same id was first seen, if
 * there is one (a re-scan keeps it). Throws a UserError naming the finding's place in the report.
 */
export function findingRecord(
  finding: ScanFinding,
  context: FindingContext,
  firstObservedAt: string | undefined,
): WholeFinding {
  const record = validated(
    'vulnerability',
    {
      tenantId: context.tenantId,
      organizationId: context.organizationId,
      assetId: context.assetId,
      vulnerabilityId: finding.vulnerabilityId,
      integrationId: context.integrationId,
      executionId: context.executionId,
      provider: context.provider,
      assetType: context.assetType,
      title: finding.title,
      description: finding.description,
      severityLevel: finding.severity,
      severitySource: finding.severitySource,
      firstObservedAt: firstObservedAt ?? context.scannedAt,
      lastObservedAt: context.scannedAt,
      publishedDate: finding.publishedDate,
      targetName: finding.packages[0]?.targetName ?? null,
      primaryUrl: finding.primaryUrl,
      packages: finding.packages.map(({ purl: _purl, ...apiPackage }) => apiPackage),
      cwes: finding.cwes.map((cwe) => cweEntry(cwe, finding.severitySource)),
      isExploitable: isExploitableByVectors(finding.vectors),
    },
    `the finding at ${finding.location}`,
  );
  const purls = finding.packages.map((p) => (p.purl === null ? null : purlKey(p.purl)));
  checkIndexedKeys(finding, purls);
  return { ...record, source: context.scanner, aliases: finding.aliases, purls } as WholeFinding;
}
