// The threat-intel feeds (shared by every tenant) and the re-enrichment of findings when one changes. A load replaces a
// feed by difference: only the rows that were added, changed or removed are written, and only findings whose id or
// alias is among their CVEs are re-enriched, so loading the same file twice writes nothing and a newer catalog costs
// what it changed. Everything happens in one transaction: the feeds, the findings of every tenant, their assets'
// derived fields (hasKev, hasExploit) and the tenants' data versions.
// The steps: the feeds stored (tables.ts), then per tenant its findings re-enriched (enrich.ts) and its risks derived.
import type { Kysely } from 'kysely';
import type { FeedData, FeedLoad, FeedLoadResult, FeedName, FeedStatus } from '../../domain/intel.js';
import type { ChangeCause } from '../../domain/changes.js';
import { bumpDataVersion } from '../accounts/tenants.js';
import { appendChanges } from '../changes/append.js';
import { changeCaptures } from '../changes/capture.js';
import { addDerivations, assetsWithCitableFindings, deriveTenantRisks, NO_DERIVATION } from '../derive/risks/derive.js';
import { analyzeTables, staleTables } from '../db/statistics.js';
import type { Database } from '../db/tables.js';
import { bulkTransaction } from '../tx/write.js';
import type { Dialect, FeedLoadPhase, WaitReason } from '../types.js';
import { reEnrichTenant, type Enriched, type IntelMade } from './enrich.js';
import { feedIntelReader } from './intel.js';
import { replaceFeed, TABLES } from './tables.js';

/** Every loaded feed, read through the connection or the transaction given. */
const loadedFeeds = async (db: Kysely<Database>): Promise<FeedStatus[]> =>
  (await db.selectFrom('feeds').selectAll().orderBy('feed').execute()).map((r) => ({
    feed: r.feed as FeedName,
    version: r.version,
    entries: r.entries,
    loadedAt: r.loaded_at,
    source: r.source,
  }));

/** A load's cause: the feed and its version, or the feeds of a load of several. */
function feedCause(results: readonly FeedLoadResult[]): ChangeCause {
  const [only, ...others] = results.filter((r) => r.changed > 0);
  if (only !== undefined && others.length === 0)
    return { kind: 'feed', feed: only.feed, ...(only.version === null ? {} : { feedVersion: only.version }) };
  return { kind: 'feed', feed: results.map((r) => r.feed).join(',') };
}

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
          // transaction's feed lock, on SQLite by its write lock, both taken before its first read (src/storage/tx/write.ts).
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
          // The findings whose flags move and the risks derived again are the load's changes (docs/DESIGN.md §100).
          const captures = changeCaptures(tx, dialect);
          for (const { tenant_id } of tenants) {
            onPhase?.('enriching');
            const enriched: Enriched =
              touched.size > 0
                ? await reEnrichTenant(tx, tenant_id, [...touched].sort(), readIntel, intelMade, dialect, (keys) =>
                    captures.findings(tenant_id, keys),
                  )
                : { updated: 0, assets: new Set(), cited: new Set() };
            findingsUpdated += enriched.updated;
            onPhase?.('deriving');
            // EPSS weighs in the likelihood of the findings a risk cites: a changed EPSS file re-derives every asset
            // that has such a finding (on 1M findings, ~45,000 of 100,000 assets; every asset took 13 s).
            const scope = epssChanged
              ? new Set([...enriched.cited, ...(await assetsWithCitableFindings(tx, tenant_id))])
              : enriched.cited;
            if (scope.size > 0) {
              await captures.risksOn(tenant_id, scope);
              risks = addDerivations(risks, await deriveTenantRisks(tx, tenant_id, scope, at));
            }
            if (scope.size > 0 || enriched.assets.size > 0) await bumpDataVersion(tx, tenant_id);
          }
          await appendChanges(tx, captures, { cause: feedCause(results), at });
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
