// The change log's rules (pipeline.md §4, docs/DESIGN.md §100): which change a record's state before and after a write
// makes, and which of its fields the change lists. Pure: the storage captures the states and appends what this decides.
import type { FindingSeverity } from './enums.js';

export const changeTypes = [
  'asset.created',
  'asset.updated',
  'asset.removed',
  'finding.opened',
  'finding.updated',
  'finding.resolved',
  'finding.reopened',
  'risk.opened',
  'risk.updated',
  'risk.resolved',
  'risk.dismissed',
  'risk.reopened',
] as const;
export type ChangeType = (typeof changeTypes)[number];

export const causeKinds = ['scan', 'import', 'feed', 'rule', 'user', 'expiry'] as const;
export type CauseKind = (typeof causeKinds)[number];

/** Why a write changed what it changed: the scan, the feed load, the command. */
export interface ChangeCause {
  kind: CauseKind;
  scanId?: string;
  feed?: string;
  feedVersion?: string;
  keyId?: string;
}

export interface ChangedField {
  name: string;
  before: unknown;
  after: unknown;
}

/** What the log tracks of a finding: a change of another field (an observation time, a description) is not one. */
export interface FindingState {
  severityLevel: FindingSeverity;
  hasKev: boolean;
  hasExploit: boolean;
  isExempted: boolean;
  /** How many packages the finding lists. */
  packages: number;
}

export interface AssetState {
  isPubliclyExposed: boolean;
  riskScore: number | null;
}

export interface RiskState {
  severityLevel: string;
  score: number;
  lifecycleState: string;
}

/** The tracked fields whose values differ, in the order of the state's fields. */
export function changedFields<S extends object>(before: S, after: S): ChangedField[] {
  const fields: ChangedField[] = [];
  for (const name of Object.keys(after) as (keyof S & string)[])
    if (before[name] !== after[name]) fields.push({ name, before: before[name], after: after[name] });
  return fields;
}

export interface Change {
  type: ChangeType;
  fields: ChangedField[] | null;
}

/**
 * The change one record's write made, from its tracked state before (undefined: it did not exist) and after (undefined:
 * it left), or undefined when the tracked state is as it was. `reopens`: a finding that comes back after it was resolved.
 */
export function findingChange(
  before: FindingState | undefined,
  after: FindingState | undefined,
  reopens: boolean,
): Change | undefined {
  if (after === undefined) return before === undefined ? undefined : { type: 'finding.resolved', fields: null };
  if (before === undefined) return { type: reopens ? 'finding.reopened' : 'finding.opened', fields: null };
  const fields = changedFields(before, after);
  return fields.length === 0 ? undefined : { type: 'finding.updated', fields };
}

export function assetChange(before: AssetState | undefined, after: AssetState | undefined): Change | undefined {
  if (after === undefined) return before === undefined ? undefined : { type: 'asset.removed', fields: null };
  if (before === undefined) return { type: 'asset.created', fields: null };
  const fields = changedFields(before, after);
  return fields.length === 0 ? undefined : { type: 'asset.updated', fields };
}

const isOpen = (state: string): boolean => state === 'OPEN';

/** A risk's lifecycle moving from open to dismissed or back is its dismissal or reopening; any other move an update. */
export function riskChange(before: RiskState | undefined, after: RiskState | undefined): Change | undefined {
  if (after === undefined) return before === undefined ? undefined : { type: 'risk.resolved', fields: null };
  if (before === undefined) return { type: 'risk.opened', fields: null };
  const fields = changedFields(before, after);
  if (fields.length === 0) return undefined;
  const type =
    isOpen(before.lifecycleState) && !isOpen(after.lifecycleState)
      ? 'risk.dismissed'
      : !isOpen(before.lifecycleState) && isOpen(after.lifecycleState)
        ? 'risk.reopened'
        : 'risk.updated';
  return { type, fields };
}
