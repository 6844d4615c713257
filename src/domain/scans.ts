// A scan as the API serves it (pipeline.md §2): one report uploaded over HTTP or ingested by `secinv ingest`, its
// status, and once it ends what it changed (`summary`), what it leaves open on its assets (`gate`) or why it failed.
import { findingSeverities, severityLevelValues, type FindingSeverity } from './enums.js';

export const scanStatuses = ['queued', 'running', 'succeeded', 'failed'] as const;
export type ScanStatus = (typeof scanStatuses)[number];

export interface ScanProblem {
  message: string;
  file?: string;
  /** A JSON Pointer into the report. */
  path?: string;
  line?: number;
}

export type SeverityCounts = Record<FindingSeverity, number>;

export interface ScanSummary {
  assets: { created: number; updated: number; unchanged: number };
  findings: { added: number; updated: number; unchanged: number; resolved: number };
  exemptions: { added: number; removed: number };
  checks: { failed: number; passed: number };
  risks: { new: number; changed: number; gone: number };
  assetIds: string[];
}

export interface ScanGate {
  /** Open, not exempted findings on the scan's assets after it, by severity. */
  open: SeverityCounts;
  /** Findings this scan added, by severity. */
  added: SeverityCounts;
  /** Open findings on the scan's assets that are in CISA KEV, and that have a public exploit. */
  kev: number;
  exploit: number;
}

export interface ScanRecord {
  id: string;
  tenantId: string;
  status: ScanStatus;
  name: string | null;
  format: string | null;
  options: Record<string, unknown>;
  sizeBytes: number;
  sha256: string;
  keyId: string | null;
  submittedAt: string;
  startedAt: string | null;
  finishedAt: string | null;
  summary: ScanSummary | null;
  gate: ScanGate | null;
  problems: ScanProblem[];
}

/** Zero of every severity, in the enum's order. */
export const noSeverities = (): SeverityCounts => ({
  CRITICAL: 0,
  HIGH: 0,
  MEDIUM: 0,
  LOW: 0,
  INFORMATIONAL: 0,
  UNKNOWN: 0,
});

const bySeverityLevel = new Map(findingSeverities.map((severity) => [severityLevelValues[severity], severity]));

/** The severity of a `severityLevelValue`. */
export const severityOfLevel = (value: number): FindingSeverity => bySeverityLevel.get(value) ?? 'UNKNOWN';

/** Counts summed severity by severity. */
export const addSeverities = (counts: readonly SeverityCounts[]): SeverityCounts =>
  counts.reduce((sum, next) => {
    for (const severity of findingSeverities) sum[severity] += next[severity];
    return sum;
  }, noSeverities());

// The lifecycle of a scan in storage: queued by an upload, claimed by a server process, ended by the write that
// applies it (src/storage/scans/).

/** An upload to queue: its record's fields known before the body is read. */
export interface NewScan {
  id: string;
  tenantId: string;
  name: string | null;
  options: Record<string, unknown>;
  keyId: string | null;
  idempotencyKey: string | null;
  submittedAt: string;
}

/** What accepting an upload did: queued it, found the same upload under its idempotency key, or another one there. */
export type AcceptedScan = { kind: 'created' | 'repeated'; scan: ScanRecord } | { kind: 'conflict' };

/** A scan a process took from the queue to apply; `interrupted` ones were ended `failed` instead. */
export interface ClaimedScan {
  seq: number;
  tenantId: string;
  scanId: string;
  owner: string;
  interrupted: boolean;
  name: string | null;
  options: Record<string, unknown>;
  /** The key that uploaded it (null for a scan `secinv ingest` recorded). */
  keyId: string | null;
}

/** How a scan ends inside the write that applies it (BulkWriter.endScan). */
export interface ScanOutcome {
  format: string | null;
  summary: ScanSummary;
  gate: ScanGate;
}

export interface ScanListQuery {
  perPage: number;
  statuses?: ScanStatus[] | undefined;
  formats?: string[] | undefined;
  submittedAtStart?: string | undefined;
  submittedAtEnd?: string | undefined;
}

/** Where a batch of the scan list ends: the list is newest first. */
export interface ScanPosition {
  submittedAt: string;
  id: string;
}
