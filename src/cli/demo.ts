import { Readable } from 'node:stream';
import { apiConnectOptions, loadConfig } from '../config.js';
import { generateRecords, type GenerateOptions } from '../generate/generator.js';
import { scanHistory, type HistoryOptions } from '../generate/history.js';
import { importSources, summaryLine } from '../import/importer.js';
import { ingestFiles } from '../ingest/ingest.js';
import { startServer } from '../server.js';
import { displayDatabaseUrl, openStorage, type Storage } from '../storage/index.js';
import { openDatabase, type Io } from './io.js';
import { createTenantKey } from './keys.js';

export const DEMO_OPTIONS: GenerateOptions = {
  seed: 'demo',
  tenants: 2,
  assets: 2500,
  findingsPerAsset: 6,
  risks: 600,
};

/** The scans that give the demo its months of remediation: 24 images per tenant, weekly for 26 weeks. */
export const DEMO_HISTORY: HistoryOptions = { images: 24, weeks: 26 };

/** The generated demo inventory as an import source, streamed through the same path as `secinv import`. */
const demoSource = (options: GenerateOptions) => ({
  name: '<demo>',
  open: () =>
    Readable.from(
      (function* () {
        for (const line of generateRecords(options)) yield `${line}\n`;
      })(),
    ),
});

/**
 * Ingests the generated scan history through the path of `secinv ingest`, each week's reports of a tenant in one
 * run at the scans' time (which is also the write's clock, so each resolution lands on its day), until `stop()`
 * says to. How many scans of images it applied, and how many findings they resolved.
 */
export async function ingestHistory(
  storage: Storage,
  options: GenerateOptions,
  history: HistoryOptions,
  stop: () => boolean = () => false,
): Promise<{ scans: number; resolved: number }> {
  let scans = 0;
  let resolved = 0;
  for (const run of scanHistory(options, history)) {
    if (stop()) break;
    const result = await ingestFiles(
      storage,
      run.reports.map(({ name, text }) => ({ name, open: () => Readable.from([Buffer.from(text)]) })),
      { tenantId: run.tenantId, format: 'trivy', resolve: true, dryRun: false, now: () => new Date(run.at) },
    );
    if (result.problems.length > 0)
      throw new Error(`demo scan history failed: ${result.problems[0]?.message ?? 'unknown problem'}`);
    scans += result.files.length;
    resolved += result.files.reduce((sum, file) => sum + file.resolved, 0);
    // A run on SQLite never waits on I/O, so nothing else of the process (a request, a signal) would run before the
    // last one ended: each run lets them in.
    await new Promise((resolve) => setImmediate(resolve));
  }
  return { scans, resolved };
}

export async function demoCommand(opts: { db?: string; host?: string; port?: string }, io: Io): Promise<void> {
  // The demo keeps its own database and a quieter log (their defaults are in src/config.ts).
  const config = loadConfig(opts, undefined, { demo: true });
  // Import and keys go through the administrative connection; the server reads through the API role.
  const admin = await openDatabase(config.databaseUrl, io);
  const keys: { tenant: string; key: string }[] = [];
  /** The inventory's options when this run generated it: its scan history is still to ingest. */
  let generated: GenerateOptions | undefined;
  try {
    const tenants = await admin.listTenants();
    if (tenants.length === 0) {
      io.stderr.write('secinv: generating the demo inventory …\n');
      // The inventory and its scan history end now, so the console's last 90 days show them.
      generated = { ...DEMO_OPTIONS, now: new Date() };
      const result = await importSources(admin, [demoSource(generated)], { dryRun: false });
      if (result.problemCount > 0)
        throw new Error(`demo import failed: ${result.problems[0]?.message ?? 'unknown problem'}`);
      io.stderr.write(`secinv: ${summaryLine(result, false)}\n`);
    } else {
      io.stderr.write(`secinv: reusing the demo inventory already in the database\n`);
    }
    for (const tenant of (await admin.listTenants()).slice(0, 2)) {
      const { key } = await createTenantKey(admin, tenant.tenantId, 'demo');
      keys.push({ tenant: `${tenant.name ?? tenant.tenantId} (${tenant.tenantId})`, key });
    }
  } catch (error) {
    await admin.close();
    throw error;
  }
  if (generated === undefined) await admin.close();

  // The same database as above, already named on stderr.
  const storage = await openStorage(config.databaseUrl, apiConnectOptions(config));
  const server = await startServer(config, storage).catch(async (error: unknown) => {
    await storage.close();
    if (generated !== undefined) await admin.close();
    throw error;
  });
  const lines = [
    `secinv demo: serving ${server.url} (API reference: ${server.url}/docs)`,
    `Console: ${server.url}/console/ (open it in a browser and paste a KEY below)`,
    ...(generated === undefined
      ? []
      : [`The weekly image scans of the last ${DEMO_HISTORY.weeks} weeks go in now; stderr says when they are in.`]),
    '',
  ];
  for (const { tenant, key } of keys) {
    lines.push(
      `Tenant ${tenant}`,
      `  KEY=${key}`,
      `  console: ${server.url}/console/ (sign in with this KEY)`,
      `  curl -s -H "Authorization: Bearer ${key}" '${server.url}/v1/tenant/assets?perPage=2&sortBy=riskScore&sortOrder=DESC'`,
      `  curl -s -H "Authorization: Bearer ${key}" '${server.url}/v1/tenant/assets?providers=AWS&severityLevels=CRITICAL&perPage=5'`,
      `  curl -s -H "Authorization: Bearer ${key}" '${server.url}/v1/tenant/risks?severityLevels=CRITICAL&include=primaryAsset&perPage=2'`,
      '',
    );
  }
  // The demo keeps its own database; this is how to serve it again without regenerating it.
  lines.push(
    `To serve this data again: npx secinv serve --db ${shellQuote(displayDatabaseUrl(config.databaseUrl))}`,
    '',
    'Press Ctrl+C to stop.',
    '',
  );
  io.stdout.write(lines.join('\n'));
  if (generated === undefined) return server.closed;
  // The weekly scans of the last months go in while the server already answers (12-14 s of CPU, about the
  // import's, docs/BENCHMARKS.md): each week's run commits on its own, so the console's charts fill as they do.
  // Stopped at the signal that stops the server, not after its grace period: the run under way finishes first.
  let closed = false;
  const stop = () => void (closed = true);
  process.once('SIGINT', stop).once('SIGTERM', stop);
  void server.closed.then(stop);
  const history = ingestHistory(admin, generated, DEMO_HISTORY, () => closed)
    .then(
      ({ scans, resolved }) =>
        io.stderr.write(
          scans < DEMO_HISTORY.images * DEMO_HISTORY.weeks * generated.tenants
            ? `secinv: stopped the demo's scan history after ${scans} image scans (a later demo on this database does not resume it)\n`
            : `secinv: ingested the demo's scan history: ${scans} image scans over ${DEMO_HISTORY.weeks} weeks, ${resolved} findings resolved\n`,
        ),
      // The inventory is in and served: the demo goes on without its history.
      (error: unknown) =>
        io.stderr.write(
          `secinv: the demo's scan history failed: ${error instanceof Error ? error.message : String(error)}\n`,
        ),
    )
    .finally(() => {
      process.off('SIGINT', stop).off('SIGTERM', stop);
      return admin.close();
    });
  await Promise.all([server.closed, history]);
}

const shellQuote = (text: string): string =>
  /^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replaceAll("'", "'\\''")}'`;
