// A failed configuration check: what a CSPM or misconfiguration scanner (Prowler, Trivy) says is wrong with one
// resource. Ingest stores the failures per asset and scanner; the risk rules turn each into a risk (docs/RISKS.md).
import type { FindingSeverity } from './enums.js';

export interface FailedCheck {
  /** The scanner's id of the check (Prowler `metadata.event_code`, Trivy `ID`/`AVDID`): the risk's `riskTypeId`. */
  checkId: string;
  /** The scanner that reported it: `prowler`, `trivy`. */
  source: string;
  title: string | null;
  /** What the check verifies and why it matters. */
  description: string | null;
  severity: FindingSeverity;
  /** What to do, in the scanner's words. */
  remediation: string | null;
  /** Links the scanner gives for the check (documentation, remediation guides). */
  references: string[];
  /** What the scanner saw on this resource (Prowler `status_detail`, Trivy `Message`). */
  detail: string | null;
}

/** What one report says about one asset's checks. */
export interface CheckResults {
  /** Failed checks, one per check id (a check reported twice on one resource is one failure). */
  failed: FailedCheck[];
  /** Ids of checks the report says passed: each resolves an earlier failure of the same check on the asset. */
  passed: string[];
  /**
   * True when the report covers every check of its scanner on the asset (a Trivy scan): failures it no longer lists
   * are resolved too, unless `--no-resolve`. False when a report may run a subset (Prowler): only `passed` resolves.
   */
  complete: boolean;
}

/**
 * Whether a scanner's report made or updated the asset: ingest records each report in `rawData.secinvScans`
 * (docs/INGEST.md). Such an asset's riskScore is derived from its risks; an imported asset keeps the one its file gives.
 */
export const isScannedAsset = (rawData: Record<string, unknown>): boolean =>
  typeof rawData.secinvScans === 'object' && rawData.secinvScans !== null;
