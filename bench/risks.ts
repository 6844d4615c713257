// Risk derivation benchmark: Storage.deriveRisks (what `secinv risks derive` runs) over a generated tenant of ~100,000
// assets and ~1,000,000 findings, with a generated FIRST EPSS file of full size loaded (so the epss factor counts).
// Times three runs, each in a process of its own so that its peak RSS is its own: the first derivation (every risk
// new), a second one (nothing changed) and one after dismissing a few risks. Prints what the tenant holds that the
// rules look at; per run, the seconds, assets, risks, added/updated/removed and the peak RSS; then the risks by
// riskTypeId.
// Usage: npm run bench:risks [-- --db sqlite|postgres --assets N --findings-per-asset N --no-epss]
import { spawnSync } from 'node:child_process';
import { createReadStream, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { RULES } from '../src/domain/risk-rules.js';
import { loadFeedFiles } from '../src/feeds/load.js';
import { generateRecords } from '../src/generate/generator.js';
import { openStorage } from '../src/storage/index.js';
import type { Storage, TenantScope } from '../src/storage/types.js';
import { EPSS, writeFeeds } from './feed-files.js';
import { benchOptions, tenantDatabase } from './tenant.js';

const { values: args } = parseArgs({
  options: {
    db: { type: 'string', default: process.env.SECINV_BENCH_DB ?? 'sqlite' },
    assets: { type: 'string', default: '100000' },
    'findings-per-asset': { type: 'string', default: '10' },
    'no-epss': { type: 'boolean', default: false },
    measure: { type: 'string' }, // internal: a child process that runs one step, given the run's folder
    step: { type: 'string' },
  },
});
const options = benchOptions(args.assets, args['findings-per-asset']);
const DISMISSED = 5;
const STEPS = ['first', 'again', 'dismissed', 'summary'] as const;
type Step = (typeof STEPS)[number];

const count = (n: number) => n.toLocaleString('en-US');
const peakRss = () => `${Math.round(process.resourceUsage().maxRSS / 1024)} MB`; // kilobytes; the peak so far

/** The tenant's scope for reads; a fresh process has no cached count to key by the data version. */
async function scopeOf(storage: Storage): Promise<TenantScope> {
  const [tenant] = await storage.listTenants();
  if (!tenant) throw new Error('no tenant');
  return { tenantId: tenant.tenantId, dataVersion: 0 };
}

async function totalRisks(storage: Storage, scope: TenantScope, filters: Record<string, string[]>): Promise<number> {
  const query = { sortBy: 'discoveredAt', sortOrder: 'desc', perPage: 1, ...filters } as const;
  return (await storage.listRisks(scope, query, undefined)).total;
}

/** The risks by riskTypeId and by lifecycle state, after the runs. */
async function summary(storage: Storage, scope: TenantScope): Promise<void> {
  const all = await totalRisks(storage, scope, {});
  const lines = [`risks after the runs: ${count(all)}`];
  let known = 0;
  for (const rule of RULES) {
    if (rule.riskTypeId.startsWith('<')) continue; // the check rule: the generated tenant has no failed checks
    const n = await totalRisks(storage, scope, { riskTypeIds: [rule.riskTypeId] });
    known += n;
    lines.push(`  ${rule.riskTypeId}: ${count(n)}`);
  }
  lines.push(`  other (failed checks): ${count(all - known)}`);
  const dismissed = await totalRisks(storage, scope, { lifecycleStates: ['DISMISSED_ACCEPTED'] });
  lines.push(`  of which DISMISSED_ACCEPTED: ${count(dismissed)}`);
  process.stdout.write(`\n${lines.join('\n')}\n`);
}

/** Runs one step in this process and prints its row. */
async function measure(dir: string, step: Step): Promise<void> {
  const { url } = JSON.parse(readFileSync(join(dir, 'run.json'), 'utf8')) as { url: string };
  const storage = await openStorage(url);
  try {
    const scope = await scopeOf(storage);
    if (step === 'summary') return await summary(storage, scope);
    let label = step === 'first' ? 'first (every risk new)' : 'again (nothing changed)';
    if (step === 'dismissed') {
      // The highest-scored risks, as a user would dismiss them first.
      const page = await storage.listRisks(
        scope,
        { sortBy: 'score', sortOrder: 'desc', perPage: DISMISSED },
        undefined,
      );
      const started = performance.now();
      for (const item of page.items) {
        const { id } = JSON.parse(item.toString('utf8')) as { id: string };
        await storage.setRiskLifecycle(scope.tenantId, id, 'DISMISSED_ACCEPTED', new Date().toISOString());
      }
      label = `after dismissing ${page.items.length} risks (${((performance.now() - started) / 1000).toFixed(2)} s)`;
    }
    const started = performance.now();
    const result = await storage.deriveRisks(scope.tenantId, new Date().toISOString());
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    if (!result) throw new Error('unknown tenant');
    const counts = [result.assets, result.risks, result.added, result.updated, result.removed].map(count);
    process.stdout.write(`| ${[label, seconds, ...counts, peakRss()].join(' | ')} |\n`);
  } finally {
    await storage.close();
  }
}

/** What the rules look at in the generated tenant, counted from the generator's records (exemptions not applied). */
function describeTenant(): string {
  const n = { assets: 0, exposed: 0, privileged: 0, either: 0, secrets: 0, findings: 0, kev: 0, exploitable: 0 };
  const either = new Set<string>(); // exposed or privileged: the only assets where a rule cites a finding not in KEV
  const exploitable = new Map<string, number>(); // exploitable findings not in KEV, by asset
  for (const line of generateRecords(options)) {
    const { kind, record: r } = JSON.parse(line) as { kind: string; record: Record<string, unknown> };
    if (kind === 'asset') {
      const [exposed, privileged] = [r.isPubliclyExposed, r.hasAdminPrivileges || r.hasOverlyPermissivePrivileges];
      n.assets += 1;
      n.exposed += exposed ? 1 : 0;
      n.privileged += privileged ? 1 : 0;
      n.secrets += ['Low', 'Medium', 'High', 'Critical'].some((l) => Number(r[`numberOf${l}Secrets`]) > 0) ? 1 : 0;
      if (exposed || privileged) either.add(r.id as string);
    } else if (kind === 'vulnerability') {
      n.findings += 1;
      if (r.hasKev) n.kev += 1;
      else if (r.isExploitable) exploitable.set(r.assetId as string, (exploitable.get(r.assetId as string) ?? 0) + 1);
    }
  }
  for (const [id, k] of exploitable) if (either.has(id)) n.exploitable += k;
  n.either = either.size;
  return [
    `tenant: ${count(n.assets)} assets, ${count(n.findings)} findings; ${count(n.exposed)} assets publicly exposed,`,
    `${count(n.privileged)} with admin or overly permissive privileges (${count(n.either)} either),`,
    `${count(n.secrets)} with secrets; ${count(n.kev)} findings in KEV, ${count(n.exploitable)} more exploitable`,
    `ones on exposed or privileged assets (the findings a rule can cite, before exemptions)`,
  ].join(' ');
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'secinv-bench-risks-'));
  try {
    const epss = !args['no-epss'];
    await writeFeeds(dir, options);
    // EPSS is loaded before the import: loaded after it, the load would derive every risk of the tenant itself.
    const prepare = async (storage: Storage) => {
      const path = join(dir, EPSS);
      const outcome = await loadFeedFiles(storage, [{ name: path, open: () => createReadStream(path) }]);
      if (outcome.load === null) throw new Error(`EPSS load failed: ${JSON.stringify(outcome.problems[0])}`);
    };
    const name = epss ? 'risks-epss' : 'risks';
    const db = await tenantDatabase(dir, { db: args.db, options, name, ...(epss ? { prepare } : {}) });
    try {
      writeFileSync(join(dir, 'run.json'), JSON.stringify({ url: db.url }));
      process.stdout.write(`${describeTenant()}; EPSS ${epss ? 'loaded' : 'not loaded'}\n\n`);
      const columns = ['run', 'seconds', 'assets', 'risks', 'added', 'updated', 'removed', 'peak RSS'];
      process.stdout.write(`risks ${args.db}\n\n| ${columns.join(' | ')} |\n${'|---'.repeat(columns.length)}|\n`);
      for (const step of STEPS) {
        const argv = [...process.execArgv, fileURLToPath(import.meta.url), '--measure', dir, '--step', step];
        const child = spawnSync(process.execPath, argv, { stdio: 'inherit' });
        if (child.status !== 0) {
          process.exitCode = child.status ?? 1;
          break;
        }
      }
    } finally {
      await db.drop();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (args.measure !== undefined) await measure(args.measure, (args.step ?? 'first') as Step);
else await main();
