// The threat-intel feeds (shared by every tenant) and the re-enrichment of findings when one changes. A load replaces a
// feed by difference: only the rows that were added, changed or removed are written, and only findings whose id or
// alias is among their CVEs are re-enriched, so loading the same file twice writes nothing and a newer catalog costs
// what it changed. Everything happens in one transaction: the feeds, the findings of every tenant, their assets'
// derived fields (hasKev, hasExploit) and the tenants' data versions.
import type { Kysely, Transaction } from 'kysely';
import {
  intelKeys,
  storedIntel,
  type FeedData,
  type FeedLoad,
  type FeedLoadResult,
  type FeedName,
  type FeedStatus,
  type Intel,
} from '../../domain/intel.js';
import { raiseIntelFlag, refreshIntelFlags } from '../derive/fields.js';
import { bumpDataVersion } from '../accounts/tenants.js';
import {
  addDerivations,
  assetsThatReach,
  assetsWithCitableFindings,
  deriveTenantRisks,
  NO_DERIVATION,
} from '../derive/risks/derive.js';
import { feedIntelReader, intelOf, type FeedIntel } from './intel.js';
import { appendTo } from '../../lib/collections.js';
import { bulkTransaction } from '../tx/write.js';
import { type WaitReason } from '../types.js';
import { analyzeTables, staleTables } from '../db/statistics.js';
import type { Database } from '../db/tables.js';
import type { Dialect, FeedLoadPhase } from '../types.js';
import { addUpdate, insertRows, updateRows, type UpdateGroups } from '../db/insert-rows.js';

const CHUNK = 500;
/** Feed rows per statement: 3 parameters each stay far below both databases' parameter limits. */
const WRITE_CHUNK = 5000;

type Tx = Transaction<Database>;

/** A feed's rows as key → stored value, and how to write them. */
interface FeedTable {
  read(tx: Tx): Promise<Map<string, string>>;
  remove(tx: Tx, keys: string[]): Promise<void>;
  upsert(tx: Tx, rows: [string, string][]): Promise<void>;
  /** The CVE of a row key. */
  cveOf(key: string): string;
}

const SEP = '\u0000';

const kevTable: FeedTable = {
  read: async (tx) =>
    new Map((await tx.selectFrom('feed_kev').select(['cve_id', 'entry']).execute()).map((r) => [r.cve_id, r.entry])),
  remove: async (tx, keys) => {
    await tx.deleteFrom('feed_kev').where('cve_id', 'in', keys).execute();
  },
  upsert: async (tx, rows) => {
    await tx
      .insertInto('feed_kev')
      .values(rows.map(([cve_id, entry]) => ({ cve_id, entry })))
      .onConflict((oc) => oc.column('cve_id').doUpdateSet((eb) => ({ entry: eb.ref('excluded.entry') })))
      .execute();
  },
  cveOf: (key) => key,
};

const exploitTable: FeedTable = {
  read: async (tx) =>
    new Map(
      (await tx.selectFrom('feed_exploits').select(['cve_id', 'exploit_id', 'entry']).execute()).map((r) => [
        `${r.cve_id}${SEP}${r.exploit_id}`,
        r.entry,
      ]),
    ),
  remove: async (tx, keys) => {
    const byCve = new Map<string, string[]>();
    for (const key of keys) {
      const [cve_id = '', exploit_id = ''] = key.split(SEP);
      appendTo(byCve, cve_id, exploit_id);
    }
    for (const [cve_id, ids] of byCve)
      await tx.deleteFrom('feed_exploits').where('cve_id', '=', cve_id).where('exploit_id', 'in', ids).execute();
  },
  upsert: async (tx, rows) => {
    await tx
      .insertInto('feed_exploits')
      .values(
        rows.map(([key, entry]) => {
          const [cve_id = '', exploit_id = ''] = key.split(SEP);
          return { cve_id, exploit_id, entry };
        }),
      )
      .onConflict((oc) =>
        oc.columns(['cve_id', 'exploit_id']).doUpdateSet((eb) => ({ entry: eb.ref('excluded.entry') })),
      )
      .execute();
  },
  cveOf: (key) => key.split(SEP)[0] ?? '',
};

const epssTable: FeedTable = {
  read: async (tx) =>
    new Map(
      (await tx.selectFrom('feed_epss').select(['cve_id', 'epss', 'percentile']).execute()).map((r) => [
        r.cve_id,
        `${r.epss},${r.percentile}`,
      ]),
    ),
  remove: async (tx, keys) => {
    await tx.deleteFrom('feed_epss').where('cve_id', 'in', keys).execute();
  },
  // 300,000 rows on a first load: compiled once per shape rather than through the query builder.
  upsert: async (tx, rows) => {
    const values = rows.map(([cve_id, value]) => {
      const [epss = '0', percentile = '0'] = value.split(',');
      return [cve_id, Number(epss), Number(percentile)];
    });
    await insertRows(tx, 'feed_epss', ['cve_id', 'epss', 'percentile'], values, { key: ['cve_id'] });
  },
  cveOf: (key) => key,
};

const TABLES: Record<FeedName, FeedTable> = { kev: kevTable, exploitdb: exploitTable, epss: epssTable };

/** A feed file's rows as key → stored value (the same serialisation as FeedTable.read). */
function rowsOf(data: FeedData): Map<string, string> {
  switch (data.feed) {
    case 'kev':
      return new Map(data.entries.map((e) => [e.cveID ?? '', JSON.stringify(e)]));
    case 'exploitdb':
      return new Map(data.entries.map((e) => [`${e.cveId}${SEP}${e.exploit.id ?? ''}`, JSON.stringify(e.exploit)]));
    case 'epss':
      return new Map(data.entries.map((e) => [e.cveId, `${e.epss},${e.percentile}`]));
  }
}

/** Replaces a stored feed by difference; returns the keys that changed and the rows the feed now has. */
async function replaceFeed(tx: Tx, data: FeedData): Promise<{ changed: string[]; entries: number }> {
  const table = TABLES[data.feed];
  const before = await table.read(tx);
  const after = rowsOf(data);
  const removed = [...before.keys()].filter((k) => !after.has(k));
  const written = [...after].filter(([k, v]) => before.get(k) !== v);
  for (let i = 0; i < removed.length; i += WRITE_CHUNK) await table.remove(tx, removed.slice(i, i + WRITE_CHUNK));
  for (let i = 0; i < written.length; i += WRITE_CHUNK) await table.upsert(tx, written.slice(i, i + WRITE_CHUNK));
  return { changed: [...removed, ...written.map(([k]) => k)], entries: after.size };
}

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
type IntelMade = Map<string, { next: Intel; stored: string | null }>;

/** What re-enriching a tenant's findings changed. */
interface Enriched {
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
async function reEnrichTenant(
  tx: Tx,
  tenantId: string,
  cves: string[],
  readIntel: (keys: Iterable<string>) => Promise<FeedIntel>,
  intelMade: IntelMade,
  dialect: Dialect,
): Promise<Enriched> {
  // In the order of their integer ids, which is the order the rows were written in (§45): the updates visit the
  // table's pages one after the other. In key order they came back to the same pages again and again once the page
  // cache had let them go (a first KEV load's 52,312 updates on SQLite: 3.6–6.3 s by key, 1.0–1.2 s by id; §63).
  const findings = await findingsOf(tx, tenantId, cves, dialect);
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
      addUpdate(changed, dialect === 'sqlite' ? [f.id] : [f.asset_id, f.vulnerability_id], [['intel', stored]], flags);
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

/** Every loaded feed, read through the connection or the transaction given. */
const loadedFeeds = async (db: Kysely<Database>): Promise<FeedStatus[]> =>
  (await db.selectFrom('feeds').selectAll().orderBy('feed').execute()).map((r) => ({
    feed: r.feed as FeedName,
    version: r.version,
    entries: r.entries,
    loadedAt: r.loaded_at,
    source: r.source,
  }));

export function feedStore(db: Kysely<Database>, dialect: Dialect) {
  return {
    async loadFeeds(
      feeds: readonly FeedData[],
      at: string,
      check?: (loaded: FeedStatus[]) => void | Promise<void>,
      onWait?: (reason: WaitReason) => void,
      onPhase?: (phase: FeedLoadPhase) => void,
    ): Promise<FeedLoad> {
      let stale: string[] = [];
      const load = await bulkTransaction(
        db,
        dialect,
        async (tx) => {
          // Loads take turns before reading what is loaded, so that `check` (the older-feed guard) sees the load that
          // committed just before, and the findings of every write that committed before it: on PostgreSQL by the
          // transaction's feed lock, on SQLite by its write lock, both taken before its first read (scope.ts).
          await check?.(await loadedFeeds(tx));
          onPhase?.('storing');
          const results: FeedLoadResult[] = [];
          const touched = new Set<string>();
          let epssChanged = false;
          for (const data of feeds) {
            const { changed, entries } = await replaceFeed(tx, data);
            // EPSS has no field on a finding: it is stored for the risk rules and changes no finding.
            if (data.feed !== 'epss') for (const key of changed) touched.add(TABLES[data.feed].cveOf(key));
            else if (changed.length > 0) epssChanged = true;
            const row = { version: data.version, entries, loaded_at: at, source: data.source };
            results.push({
              feed: data.feed,
              version: row.version,
              source: row.source,
              entries: row.entries,
              changed: changed.length,
            });
            await tx
              .insertInto('feeds')
              .values({ feed: data.feed, ...row })
              .onConflict((oc) => oc.column('feed').doUpdateSet(row))
              .execute();
          }
          let findingsUpdated = 0;
          let risks = NO_DERIVATION;
          const tenants = await tx.selectFrom('tenants').select('tenant_id').orderBy('tenant_id').execute();
          const readIntel = feedIntelReader(tx);
          const intelMade: IntelMade = new Map();
          for (const { tenant_id } of tenants) {
            onPhase?.('enriching');
            const enriched: Enriched =
              touched.size > 0
                ? await reEnrichTenant(tx, tenant_id, [...touched].sort(), readIntel, intelMade, dialect)
                : { updated: 0, assets: new Set(), cited: new Set() };
            findingsUpdated += enriched.updated;
            onPhase?.('deriving');
            // EPSS weighs in the likelihood of the findings a risk cites: a changed EPSS file re-derives every asset
            // that has such a finding (on 1M findings, ~45,000 of 100,000 assets; every asset took 13 s).
            const scope = epssChanged
              ? new Set([...enriched.cited, ...(await assetsWithCitableFindings(tx, tenant_id))])
              : enriched.cited;
            if (scope.size > 0) risks = addDerivations(risks, await deriveTenantRisks(tx, tenant_id, scope, at));
            if (scope.size > 0 || enriched.assets.size > 0) await bumpDataVersion(tx, tenant_id);
          }
          // The tables a load writes rows of (the findings it only updates): analysed by the load that moved them, not
          // by the next ingest (a first EPSS load's 300,000 rows took 0.8 s of the next 8-finding ingest on PostgreSQL).
          stale = await staleTables(tx, dialect, ['feeds', 'feed_kev', 'feed_epss', 'feed_exploits', 'risks']);
          onPhase?.('committing');
          return {
            feeds: results,
            findingsUpdated,
            risks: { added: risks.added, updated: risks.updated, removed: risks.removed },
          };
        },
        { feeds: 'load', onWait },
      );
      onPhase?.('analyzing');
      await analyzeTables(db, dialect, stale);
      onPhase?.('done');
      return load;
    },

    async feedStatus(): Promise<FeedStatus[]> {
      return loadedFeeds(db);
    },
  };
}
