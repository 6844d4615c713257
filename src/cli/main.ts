// The `secinv` command line. Exit codes: 0 success, 1 failure (one line on stderr), 2 bad usage; results on stdout,
// everything for people (progress, the database opened, errors) on stderr.
import { Argument, Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { environmentHelp, loadConfig } from '../config.js';
import { UserError } from '../domain/errors.js';
import { packageVersion } from '../http/version.js';
import { apiCommands } from './api.js';
import { completionCommand, shells, type Shell } from './completion.js';
import type { UpdateFlags } from './feeds.js';
import type { IngestFlags } from './ingest.js';
import { ingestFormats } from '../input/formats.js';
import { FEED_URLS } from '../feeds/urls.js';
import { providers } from '../domain/enums.js';
import type { Io } from './io.js';

export type { Io } from './io.js';
// Each command's code is loaded when the command runs: loaded at start, every command paid for every other's modules
// (the scanner formats, the feed parsers, the import), and `secinv --version` took a second (docs/DESIGN.md §79).

/** `--as` of `risks dismiss`, and the lifecycle state each gives. */
const DISMISSALS = { accepted: 'DISMISSED_ACCEPTED', 'not-a-risk': 'DISMISSED_NOT_A_RISK' } as const;

const integer =
  (name: string, min: number) =>
  (value: string): number => {
    if (!/^\d+$/.test(value) || Number(value) < min)
      throw new InvalidArgumentError(`${name} must be an integer >= ${min}`);
    return Number(value);
  };

const dbOption = () =>
  new Option(
    '--db <url>',
    'database: sqlite:PATH, a file path, or postgres://… (env SECINV_DATABASE_URL; default sqlite:./data/secinv.db)',
  );

const quietOption = () => new Option('-q, --quiet', 'no progress line on a terminal');

/**
 * What the `secinv` executable does around a command, and the tests, which run the command line in process, leave out.
 */
export interface ProcessHooks {
  /** Before an ingest or an import writes to this database. */
  bulkWriteStarting?: (databaseUrl: string) => void;
}

export function buildProgram(io: Io, hooks: ProcessHooks = {}): Command {
  const program = new Command('secinv')
    .description('Self-hostable server for the Tenant Security Inventory API.')
    .version(packageVersion())
    .showHelpAfterError()
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.stdout.write(s), writeErr: (s) => io.stderr.write(s) })
    .addHelpText('after', environmentHelp());
  const sub = (name: string) =>
    program
      .command(name)
      .exitOverride()
      .configureOutput({ writeOut: (s) => io.stdout.write(s), writeErr: (s) => io.stderr.write(s) });

  sub('serve')
    .description('Serve the API.')
    .addOption(dbOption())
    .option('--host <host>', 'address to listen on (env SECINV_HOST; default 127.0.0.1)')
    .option('--port <port>', 'port to listen on (env SECINV_PORT; default 8080)')
    .option('--tls-cert <file>', 'PEM certificate: serve HTTPS (env SECINV_TLS_CERT; with --tls-key)')
    .option('--tls-key <file>', 'PEM private key (env SECINV_TLS_KEY)')
    .option('--metrics-port <port>', 'serve Prometheus metrics at /metrics on this port (env SECINV_METRICS_PORT)')
    .addHelpText('after', environmentHelp())
    .action(
      async (opts: {
        db?: string;
        host?: string;
        port?: string;
        tlsCert?: string;
        tlsKey?: string;
        metricsPort?: string;
      }) => (await import('./serve.js')).serveCommand(loadConfig(opts), io),
    );

  sub('import')
    .description(
      'Load inventory files (JSON bundles or NDJSON, plain or gzip, UTF-8 or UTF-16); "-" reads standard input. ' +
        'All or nothing.',
    )
    .addOption(dbOption())
    .option('--dry-run', 'validate only, write nothing', false)
    .argument('<files...>', 'files to import', (file: string, previous: string[] = []) => {
      // Standard input can be read once.
      if (file === '-' && previous.includes('-'))
        throw new InvalidArgumentError('"-" (standard input) may be given only once');
      return [...previous, file];
    })
    .addOption(quietOption())
    .action(async (files: string[], opts: { db?: string; dryRun: boolean; quiet?: boolean }) => {
      const config = loadConfig(opts);
      hooks.bulkWriteStarting?.(config.databaseUrl);
      return (await import('./import.js')).importCommand(config, files, opts, io);
    });

  sub('ingest')
    .description(
      'Load scanner reports (Trivy or Grype JSON, Prowler OCSF), CycloneDX SBOMs and VEX, OpenVEX into one tenant; "-" reads standard input, gzip and UTF-16 are read as such. All or nothing.',
    )
    .requiredOption('--tenant <tenantId>', 'the tenant the reports are about')
    .addOption(dbOption())
    .addOption(new Option('--format <format>', 'the report format').choices(['auto', ...ingestFormats]).default('auto'))
    .option(
      '--asset <assetId>',
      'attach the scan to this existing asset (file system, repository and VM scans need it)',
    )
    .addOption(
      new Option('--provider <provider>', 'the cloud of an image whose registry does not tell it').choices([
        ...providers,
      ]),
    )
    .option('--region <region>', 'the region of an image whose registry does not tell it, or of a Kubernetes cluster')
    .option('--cluster <name>', 'the cluster of a Kubernetes report that does not name it (trivy-operator reports)')
    .option('--integration <uuid>', 'the integration (a UUID) the scanned assets and findings belong to')
    .option('--no-resolve', 'add and update findings but resolve none (partial scans)')
    .option('--dry-run', 'validate only, write nothing', false)
    .argument('<files...>', 'report files', (file: string, previous: string[] = []) => {
      if (file === '-' && previous.includes('-'))
        throw new InvalidArgumentError('"-" (standard input) may be given only once');
      return [...previous, file];
    })
    .addOption(quietOption())
    .action(async (files: string[], opts: IngestFlags & { db?: string }) => {
      const config = loadConfig(opts);
      hooks.bulkWriteStarting?.(config.databaseUrl);
      return (await import('./ingest.js')).ingestCommand(config, files, opts, io);
    });

  const group = (parent: Command) => (name: string) =>
    parent
      .command(name)
      .exitOverride()
      .configureOutput({ writeOut: (s) => io.stdout.write(s), writeErr: (s) => io.stderr.write(s) });

  const tenantsSub = group(sub('tenants').description('Create and list tenants.'));
  tenantsSub('create')
    .description('Create a tenant; prints its id alone on stdout.')
    .requiredOption('--name <name>', "the tenant's name")
    .option('--id <uuid>', 'the tenant id (default: a new UUID)')
    .option('--organization-id <uuid>', 'the organization it belongs to (default: a new UUID)')
    .addOption(dbOption())
    .action(async (opts: { name: string; id?: string; organizationId?: string; db?: string }) =>
      (await import('./tenants.js')).tenantsCreate(loadConfig(opts), opts, io),
    );
  tenantsSub('list')
    .description('List every tenant with the number of its assets, findings, risks and keys.')
    .option('--json', 'print a JSON array instead of a table', false)
    .addOption(dbOption())
    .action(async (opts: { json: boolean; db?: string }) =>
      (await import('./tenants.js')).tenantsList(loadConfig(opts), opts, io),
    );

  const ALLOW_OLDER = 'load a file older than the feed loaded (refused otherwise)';
  const feedsSub = group(sub('feeds').description('Load the threat-intel feeds (CISA KEV, FIRST EPSS, Exploit-DB).'));
  feedsSub('load')
    .description(
      'Load KEV JSON, EPSS CSV and Exploit-DB CSV files (kind told by content, gzip accepted) and re-enrich every tenant. All or nothing.',
    )
    .addOption(dbOption())
    .argument('<files...>', 'feed files', (file: string, previous: string[] = []) => {
      if (file === '-' && previous.includes('-'))
        throw new InvalidArgumentError('"-" (standard input) may be given only once');
      return [...previous, file];
    })
    .addOption(quietOption())
    .option('--allow-older', ALLOW_OLDER, false)
    .action(async (files: string[], opts: { db?: string; quiet?: boolean; allowOlder: boolean }) =>
      (await import('./feeds.js')).feedsLoad(loadConfig(opts), files, io, opts),
    );
  feedsSub('update')
    .description('Download the three feeds from their public addresses and load them. All or nothing.')
    .addOption(dbOption())
    .option('--kev-url <url>', 'CISA KEV catalog JSON', FEED_URLS.kev)
    .option('--epss-url <url>', 'FIRST EPSS scores CSV (gzip)', FEED_URLS.epss)
    .option('--exploitdb-url <url>', 'Exploit-DB files_exploits.csv', FEED_URLS.exploitdb)
    .option('--timeout <seconds>', 'give up on a download after this long', integer('--timeout', 1), 300)
    .option('--allow-older', ALLOW_OLDER, false)
    .action(async (opts: UpdateFlags & { db?: string }) =>
      (await import('./feeds.js')).feedsUpdate(loadConfig(opts), opts, io),
    );
  feedsSub('status')
    .description('Each loaded feed: version or date, entries, when and from where it was loaded.')
    .option('--json', 'print a JSON array instead of a table', false)
    .addOption(dbOption())
    .action(async (opts: { json: boolean; db?: string }) =>
      (await import('./feeds.js')).feedsStatus(loadConfig(opts), opts, io),
    );

  const risksSub = group(
    sub('risks').description('Derive risks by the rules of docs/RISKS.md; dismiss and reopen them.'),
  );
  risksSub('derive')
    .description('Re-run the risk rules over every asset of a tenant (ingest and feeds load run them themselves).')
    .requiredOption('--tenant <tenantId>', 'the tenant')
    .addOption(dbOption())
    .action(async (opts: { tenant: string; db?: string }) =>
      (await import('./risks.js')).risksDerive(loadConfig(opts), opts, io),
    );
  risksSub('dismiss')
    .description('Dismiss a risk: it stays dismissed across re-derivations, also after it leaves and comes back.')
    .argument('<riskId>', 'the risk id')
    .requiredOption('--tenant <tenantId>', 'the tenant')
    .addOption(
      new Option('--as <reason>', 'accepted (DISMISSED_ACCEPTED) or not-a-risk (DISMISSED_NOT_A_RISK)')
        .choices(Object.keys(DISMISSALS))
        .makeOptionMandatory(),
    )
    .addOption(dbOption())
    .action(async (riskId: string, opts: { tenant: string; as: keyof typeof DISMISSALS; db?: string }) =>
      (await import('./risks.js')).risksSetState(
        loadConfig(opts),
        riskId,
        { tenant: opts.tenant, state: DISMISSALS[opts.as] },
        io,
      ),
    );
  risksSub('reopen')
    .description('Reopen a dismissed risk (lifecycleState OPEN).')
    .argument('<riskId>', 'the risk id')
    .requiredOption('--tenant <tenantId>', 'the tenant')
    .addOption(dbOption())
    .action(async (riskId: string, opts: { tenant: string; db?: string }) =>
      (await import('./risks.js')).risksSetState(loadConfig(opts), riskId, { tenant: opts.tenant, state: 'OPEN' }, io),
    );

  const keysSub = group(sub('keys').description('Create, list and revoke tenant API keys.'));
  keysSub('create')
    .description('Create a key; prints the key alone on stdout (shown only once).')
    .requiredOption('--tenant <tenantId>', 'tenant the key belongs to')
    .option('--name <name>', 'a label for the key')
    .option('--expires-in <days>', 'days until the key expires', integer('--expires-in', 1))
    .addOption(dbOption())
    .action(async (opts: { tenant: string; name?: string; expiresIn?: number; db?: string }) =>
      (await import('./keys.js')).keysCreate(loadConfig(opts), opts, io),
    );
  keysSub('list')
    .description('List the keys of a tenant (never the secret).')
    .requiredOption('--tenant <tenantId>', 'tenant whose keys to list')
    .option('--json', 'print a JSON array instead of a table', false)
    .addOption(dbOption())
    .action(async (opts: { tenant: string; json: boolean; db?: string }) =>
      (await import('./keys.js')).keysList(loadConfig(opts), opts, io),
    );
  keysSub('revoke')
    .description('Revoke a key by its id; takes effect on the next request.')
    .argument('<keyId>', 'the key id (first column of keys list)')
    .addOption(dbOption())
    .action(async (keyId: string, opts: { db?: string }) =>
      (await import('./keys.js')).keysRevoke(loadConfig(opts), keyId, io),
    );

  sub('generate')
    .description('Write a deterministic generated inventory as NDJSON to stdout (streamed).')
    .option('--seed <seed>', 'seed of the generator', 'secinv')
    .option('--tenants <n>', 'number of tenants', integer('--tenants', 1), 1)
    .option('--assets <n>', 'assets per tenant', integer('--assets', 0), 1000)
    .option('--findings-per-asset <n>', 'average findings per asset', integer('--findings-per-asset', 0), 5)
    .option('--risks <n>', 'risks per tenant', integer('--risks', 0), 200)
    .addOption(quietOption())
    .action(
      async (opts: {
        seed: string;
        tenants: number;
        assets: number;
        findingsPerAsset: number;
        risks: number;
        quiet?: boolean;
      }) => (await import('./generate.js')).generateCommand(opts, io),
    );

  sub('demo')
    .description(
      'Create (or reuse) a demo database for two tenants, print a key for each with curl examples, and serve.',
    )
    .addOption(new Option('--db <url>', 'database (env SECINV_DATABASE_URL; default sqlite:./data/demo.db)'))
    .option('--host <host>', 'address to listen on (default 127.0.0.1)')
    .option('--port <port>', 'port to listen on (default 8080)')
    .action(async (opts: { db?: string; host?: string; port?: string }) =>
      (await import('./demo.js')).demoCommand(opts, io),
    );

  sub('completion')
    .description('Print a completion script: secinv completion bash > /etc/bash_completion.d/secinv (zsh, fish alike).')
    .addArgument(new Argument('<shell>', 'the shell').choices(shells))
    .action(async (shell: Shell) => completionCommand(program, shell, io));

  apiCommands(sub('api'), group(program.commands.find((c) => c.name() === 'api')!), io);

  return program;
}

export async function main(
  argv: string[],
  io: Io = { stdout: process.stdout, stderr: process.stderr, stdin: process.stdin },
  hooks: ProcessHooks = {},
): Promise<number> {
  const program = buildProgram(io, hooks);
  try {
    await program.parseAsync(argv, { from: 'user' });
    return 0;
  } catch (error) {
    if (error instanceof CommanderError) {
      // Help and version are successes; every other parse failure is bad usage.
      return error.code === 'commander.helpDisplayed' ||
        error.code === 'commander.help' ||
        error.code === 'commander.version'
        ? 0
        : 2;
    }
    if (error instanceof UserError) {
      io.stderr.write(`secinv: ${error.message}\n`);
      return 1;
    }
    const err = error as NodeJS.ErrnoException;
    io.stderr.write(`secinv: ${err.code ? `${err.code}: ` : ''}${err.message.split('\n')[0]}\n`);
    return 1;
  }
}
