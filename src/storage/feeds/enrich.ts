// The re-enrichment of one tenant's findings when a feed changed: their intel column and flags, their assets' flags.
import type { Transaction } from 'kysely';
import { intelKeys, storedIntel, type Intel } from '../../domain/intel.js';
import { appendTo } from '../../lib/collections.js';
import { dueAt, slaByLevel } from '../../domain/remediation.js';
import { tenantSla } from '../accounts/tenants.js';
import { raiseIntelFlag, refreshIntelFlags } from '../derive/fields.js';
import { assetsThatReach } from '../derive/risks/derive.js';
import { addUpdate, updateRows, type UpdateGroups } from '../db/insert-rows.js';
import type { Database } from '../db/tables.js';
import type { Dialect } from '../types.js';
import { intelOf, type FeedIntel } from './intel.js';
import { SEP } from './tables.js';

const CHUNK = 500;

type Tx = Transaction<Database>;

interface FoundFinding {
  /** The finding's integer id (a string from PostgreSQL's bigint). */
  id: number | string;
  asset_id: string;
  vulnerability_id: string;
  intel: string | null;
  own_intel: string | null;
  has_kev: number;
  has_exploit: number;
  is_exploitable: number;
  is_exempted: number;
  first_observed_at: string;
  severity_level_value: number;
  due_at: string | null;
}

const FOUND_COLUMNS = [
  'v.id',
  'v.asset_id',
  'v.vulnerability_id',
  'v.intel',
  'v.own_intel',
  'v.has_kev',
  'v.has_exploit',
  'v.is_exploitable',
  'v.is_exempted',
  'v.first_observed_at',
  'v.severity_level_value',
  'v.due_at',
] as const;

/**
 * The tenant's findings whose id or an alias is one of the CVEs, in the order of their integer ids. On SQLite the ids
 * come from the indexes alone (each holds the rowid), and the rows are then read in id order, the order they lie in:
 * read through the indexes, a first Exploit-DB load's 156,109 rows came in CVE order, from all over the table (§63).
 * PostgreSQL has no index on the id alone and reads the rows with the keys.
 */
async function findingsOf(tx: Tx, tenantId: string, cves: string[], dialect: Dialect): Promise<FoundFinding[]> {
  const direct = (chunk: string[]) =>
    tx.selectFrom('vulnerabilities as v').where('v.tenant_id', '=', tenantId).where('v.vulnerability_id', 'in', chunk);
  const aliased = (chunk: string[]) =>
    tx
      .selectFrom('vulnerability_aliases as a')
      .innerJoin('vulnerabilities as v', (join) =>
        join
          .onRef('v.tenant_id', '=', 'a.tenant_id')
          .onRef('v.asset_id', '=', 'a.asset_id')
          .onRef('v.vulnerability_id', '=', 'a.vulnerability_id'),
      )
      .where('a.tenant_id', '=', tenantId)
      .where('a.alias', 'in', chunk);
  if (dialect === 'sqlite') {
    const ids = new Set<number>();
    for (let i = 0; i < cves.length; i += CHUNK) {
      const chunk = cves.slice(i, i + CHUNK);
      for (const row of await direct(chunk).select('v.id').execute()) ids.add(Number(row.id));
      for (const row of await aliased(chunk).select('v.id').execute()) ids.add(Number(row.id));
    }
    const sorted = [...ids].sort((a, b) => a - b);
    const found: FoundFinding[] = [];
    for (let i = 0; i < sorted.length; i += CHUNK)
      found.push(
        ...(await tx
          .selectFrom('vulnerabilities as v')
          .select(FOUND_COLUMNS)
          .where('v.tenant_id', '=', tenantId)
          .where('v.id', 'in', sorted.slice(i, i + CHUNK))
          .orderBy('v.id')
          .execute()),
      );
    return found;
  }
  const found = new Map<string, FoundFinding>();
  for (let i = 0; i < cves.length; i += CHUNK) {
    const chunk = cves.slice(i, i + CHUNK);
    const rows = [
      ...(await direct(chunk).select(FOUND_COLUMNS).execute()),
      ...(await aliased(chunk).select(FOUND_COLUMNS).execute()),
    ];
    for (const row of rows) found.set(`${row.asset_id}${SEP}${row.vulnerability_id}`, row);
  }
  return [...found.values()].sort((a, b) => Number(a.id) - Number(b.id));
}

/**
 * The intel made for the findings of a load, by what alone makes it: a finding's own intel, its id and its aliases (the
 * feeds no longer change once stored). The findings of one CVE share it, made and serialised once, in every tenant (a
 * first Exploit-DB load: 156,109 findings, 300 CVEs).
 */
export type IntelMade = Map<string, { next: Intel; stored: string | null }>;

/** What re-enriching a tenant's findings changed. */
export interface Enriched {
  updated: number;
  /** Assets with a finding whose intel changed. */
  assets: Set<string>;
  /** Of those, the assets where such a finding is citable by the risk rules before or after (see below). */
  cited: Set<string>;
}

/**
 * Re-enriches one tenant's findings among `cves` and their assets' derived fields. Only the narrow rows are written:
 * the intel column and its two flags, never a document (§44). The risk rules read only the findings they can cite
 * (src/domain/risk-engine.ts isCitable): not exempted, and known-exploited, or exploitable on a publicly exposed or
 * privileged asset. A finding whose intel changed moves a risk only if it is citable before the change or after it, so
 * only those findings' assets are `cited` (a first Exploit-DB load changed 156,109 findings; ~15% of them are citable).
 */
export async function reEnrichTenant(
  tx: Tx,
  tenantId: string,
  cves: string[],
  readIntel: (keys: Iterable<string>) => Promise<FeedIntel>,
  intelMade: IntelMade,
  dialect: Dialect,
  /** Told the findings whose KEV or exploit flag or due date is about to move, before they are written (the change log). */
  beforeUpdate: (keys: { asset_id: string; vulnerability_id: string }[]) => Promise<void> = () => Promise.resolve(),
): Promise<Enriched> {
  // In the order of their integer ids, which is the order the rows were written in (§45): the updates visit the
  // table's pages one after the other. In key order they came back to the same pages again and again once the page
  // cache had let them go (a first KEV load's 52,312 updates on SQLite: 3.6–6.3 s by key, 1.0–1.2 s by id; §63).
  const findings = await findingsOf(tx, tenantId, cves, dialect);
  const sla = slaByLevel(await tenantSla(tx, tenantId));
  // SQLite updates a row by its id (the rowid); PostgreSQL has no index on the id alone and updates by the key.
  const key = dialect === 'sqlite' ? ['id'] : ['asset_id', 'vulnerability_id'];
  const assets = new Set<string>();
  // Assets where a finding that is not exempted lost a flag (their flags are counted again), and where one gained it.
  const lowered = new Set<string>();
  const raised = { has_kev: new Set<string>(), has_exploit: new Set<string>() };
  // Assets where a changed finding is citable whatever the asset's reach (KEV before or after), and where it is only
  // if the asset is exposed or privileged.
  const cited = new Set<string>();
  const ifReached = new Set<string>();
  let updated = 0;
  for (let i = 0; i < findings.length; i += CHUNK) {
    const batch = findings.slice(i, i + CHUNK);
    const batchAssets = [...new Set(batch.map((f) => f.asset_id))];
    const aliases = new Map<string, string[]>();
    for (let j = 0; j < batchAssets.length; j += CHUNK) {
      const rows = await tx
        .selectFrom('vulnerability_aliases')
        .select(['asset_id', 'vulnerability_id', 'alias'])
        .where('tenant_id', '=', tenantId)
        .where('asset_id', 'in', batchAssets.slice(j, j + CHUNK))
        .execute();
      for (const r of rows) {
        const key = `${r.asset_id}${SEP}${r.vulnerability_id}`;
        appendTo(aliases, key, r.alias);
      }
    }
    const keyed = batch.map((f) => ({ f, aliases: aliases.get(`${f.asset_id}${SEP}${f.vulnerability_id}`) ?? [] }));
    const intel = await readIntel(keyed.flatMap(({ f, aliases: a }) => intelKeys(f.vulnerability_id, a)));
    // Grouped by the flags that move: SQLite moves a row's entry in the index of every column a statement sets, even
    // to the value it has, and most rows change one flag (a first KEV load: 4.97 → 2.79 s of statements).
    const changed: UpdateGroups = new Map();
    const flagged: { asset_id: string; vulnerability_id: string }[] = [];
    let count = 0;
    for (const { f, aliases: a } of keyed) {
      const memo = `${f.own_intel ?? ''}${SEP}${f.vulnerability_id}${SEP}${a.join(SEP)}`;
      let made = intelMade.get(memo);
      if (made === undefined) {
        const own = f.own_intel === null ? null : ownOf(JSON.parse(f.own_intel) as Partial<Intel>);
        const next = intelOf(intel, own, f.vulnerability_id, a);
        made = { next, stored: storedIntel(next) };
        intelMade.set(memo, made);
      }
      const { next, stored } = made;
      if (stored === f.intel) continue;
      // Each flag as [column, value now, value stored].
      const flags = [
        ['has_kev', next.hasKev ? 1 : 0, f.has_kev],
        ['has_exploit', next.hasExploit ? 1 : 0, f.has_exploit],
      ] as const;
      // A KEV entry's due date moves the finding's when earlier (src/domain/remediation.ts).
      const due = dueAt(f.first_observed_at, sla[f.severity_level_value], next.knownExploit?.dueDate);
      addUpdate(
        changed,
        dialect === 'sqlite' ? [f.id] : [f.asset_id, f.vulnerability_id],
        [['intel', stored]],
        [...flags, ['due_at', due, f.due_at]],
      );
      if (flags.some(([, now, before]) => now !== before) || due !== f.due_at) flagged.push(f);
      count += 1;
      assets.add(f.asset_id);
      if (f.is_exempted === 1) continue;
      for (const [column, now, before] of flags) {
        if (now < before) lowered.add(f.asset_id);
        else if (now > before) raised[column].add(f.asset_id);
      }
      if (f.has_kev === 1 || next.hasKev) cited.add(f.asset_id);
      else if (f.is_exploitable === 1) ifReached.add(f.asset_id);
    }
    await beforeUpdate(flagged);
    for (const { columns, rows } of changed.values())
      await updateRows(tx, 'vulnerabilities', tenantId, key, columns, rows);
    updated += count;
  }
  if (lowered.size > 0) await refreshIntelFlags(tx, tenantId, lowered);
  for (const column of ['has_kev', 'has_exploit'] as const)
    await raiseIntelFlag(
      tx,
      tenantId,
      column,
      [...raised[column]].filter((a) => !lowered.has(a)),
    );
  const reached = await assetsThatReach(
    tx,
    tenantId,
    [...ifReached].filter((a) => !cited.has(a)),
  );
  for (const id of reached) cited.add(id);
  return { updated, assets, cited };
}

/** Own intel as stored: by migration 0006 from a whole stored document, since then the four fields alone. */
const ownOf = (stored: Partial<Intel>): Intel => ({
  hasKev: stored.hasKev === true,
  hasExploit: stored.hasExploit === true,
  knownExploit: stored.knownExploit ?? null,
  exploits: stored.exploits ?? [],
});
