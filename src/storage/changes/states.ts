// A record's tracked state (src/domain/changes.ts) as one short text, built by SQL from its row: a write's captures
// and its changes hold it, so that the diff of a write is a comparison of two strings inside the database, and a
// change's `fields` are read back from the two (docs/DESIGN.md §100). Integers and the database's own number text only:
// both sides of a comparison are spelled by the same database.
import { sql, type RawBuilder } from 'kysely';
import type { AssetState, FindingState, RiskState } from '../../domain/changes.js';
import { severityOfLevel } from '../../domain/scans.js';

const text = (column: string): RawBuilder<string> => sql<string>`cast(${sql.ref(column)} as text)`;
const joined = (parts: RawBuilder<string>[]): RawBuilder<string> => sql<string>`${sql.join(parts, sql` || '|' || `)}`;

/** A finding's state from its row `v` (severity, KEV, exploit, exemption, how many packages). */
export const findingState = (tenantId: string, v = 'v'): RawBuilder<string> =>
  joined([
    text(`${v}.severity_level_value`),
    text(`${v}.has_kev`),
    text(`${v}.has_exploit`),
    text(`${v}.is_exempted`),
    sql<string>`cast((select count(*) from vulnerability_packages as p
      where p.tenant_id = ${tenantId} and p.asset_id = ${sql.ref(`${v}.asset_id`)}
        and p.vulnerability_id = ${sql.ref(`${v}.vulnerability_id`)}) as text)`,
  ]);

export const assetState = (a = 'a'): RawBuilder<string> =>
  joined([text(`${a}.is_publicly_exposed`), sql<string>`coalesce(${text(`${a}.risk_score`)}, '')`]);

export const riskState = (r = 'r'): RawBuilder<string> =>
  joined([
    sql<string>`${sql.ref(`${r}.severity_level`)}`,
    text(`${r}.score`),
    sql<string>`${sql.ref(`${r}.lifecycle_state`)}`,
  ]);

const parts = (state: string): string[] => state.split('|');

export function findingOf(state: string): FindingState {
  const [severity, kev, exploit, exempted, packages] = parts(state);
  return {
    severityLevel: severityOfLevel(Number(severity)),
    hasKev: kev === '1',
    hasExploit: exploit === '1',
    isExempted: exempted === '1',
    packages: Number(packages),
  };
}

export function assetOf(state: string): AssetState {
  const [exposed, riskScore] = parts(state);
  return {
    isPubliclyExposed: exposed === '1',
    riskScore: riskScore === undefined || riskScore === '' ? null : Number(riskScore),
  };
}

export function riskOf(state: string): RiskState {
  // A severity or a lifecycle state never holds '|' (both are enums).
  const [severityLevel = '', score, lifecycleState = ''] = parts(state);
  return { severityLevel, score: Number(score), lifecycleState };
}
