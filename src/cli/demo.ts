import { Readable } from 'node:stream';
import { apiConnectOptions, loadConfig } from '../config.js';
import { generateRecords, type GenerateOptions } from '../generate/generator.js';
import { importSources, summaryLine } from '../import/importer.js';
import { startServer } from '../server.js';
import { displayDatabaseUrl, openStorage } from '../storage/index.js';
import { openDatabase, type Io } from './io.js';
import { createTenantKey } from './keys.js';

export const DEMO_OPTIONS: GenerateOptions = {
  seed: 'demo',
  tenants: 2,
  assets: 2500,
  findingsPerAsset: 6,
  risks: 600,
};

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

export async function demoCommand(opts: { db?: string; host?: string; port?: string }, io: Io): Promise<void> {
  // The demo keeps its own database and a quieter log (their defaults are in src/config.ts).
  const config = loadConfig(opts, undefined, { demo: true });
  // Import and keys go through the administrative connection; the server reads through the API role.
  const admin = await openDatabase(config.databaseUrl, io);
  const keys: { tenant: string; key: string }[] = [];
  try {
    const tenants = await admin.listTenants();
    if (tenants.length === 0) {
      io.stderr.write('secinv: generating the demo inventory …\n');
      const result = await importSources(admin, [demoSource(DEMO_OPTIONS)], { dryRun: false });
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
  } finally {
    await admin.close();
  }

  // The same database as above, already named on stderr.
  const storage = await openStorage(config.databaseUrl, apiConnectOptions(config));
  const server = await startServer(config, storage).catch(async (error: unknown) => {
    await storage.close();
    throw error;
  });
  const lines = [
    `secinv demo: serving ${server.url} (API reference: ${server.url}/docs)`,
    `Console: ${server.url}/console/ (open it in a browser and paste a KEY below)`,
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
  await server.closed;
}

const shellQuote = (text: string): string =>
  /^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replaceAll("'", "'\\''")}'`;
