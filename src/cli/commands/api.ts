// `secinv api …`: the API of a running server from the shell (src/cli/api.ts). Each list's filter flags are generated
// from the QuerySpec the server parses with (a parameter added there is a flag here); values are passed as typed, and
// the server's 400 lists every problem.
import { Option } from 'commander';
import { CLIENT_SETTINGS } from '../../config.js';
import { getAssetSpec, listAssetsSpec } from '../../domain/assets.js';
import type { ParamSpec } from '../../domain/query.js';
import { UserError } from '../../domain/errors.js';
import { listRisksSpec } from '../../domain/risks.js';
import { listVulnerabilitiesSpec } from '../../domain/vulnerabilities.js';
import { listChangesSpec } from '../../modules/changes/schemas.js';
import { findingMetricsSpec } from '../../domain/metrics.js';
import {
  argument,
  boolean,
  choice,
  defineCommand,
  defineGroup,
  kebab,
  parsed,
  settingFlag,
  timeoutSeconds,
  text,
  type Flag,
  type FlagsOf,
} from '../command.js';
import type { ChangesFlags, CommonFlags, ConfigureFlags, ListFlags, ListName } from '../api.js';
import { outputFormats } from '../render.js';

/** The lists, the spec of their query, and their table columns without --fields. */
const LISTS = {
  assets: {
    spec: listAssetsSpec,
    columns: ['name', 'provider', 'resourceType', 'region', 'riskScore', 'vulnerabilityScore', 'id'],
  },
  risks: {
    spec: listRisksSpec,
    columns: ['severityLevel', 'score', 'lifecycleState', 'riskTypeId', 'discoveredAt', 'meta.assetName', 'id'],
  },
  vulnerabilities: {
    spec: listVulnerabilitiesSpec,
    columns: ['vulnerabilityId', 'severityLevel', 'hasKev', 'hasExploit', 'firstObservedAt', 'assetId'],
  },
} as const satisfies Record<ListName, unknown>;

/** A flag for a query parameter; a list flag may be repeated (its values are joined) or given as a comma list. */
function paramFlag(name: string, spec: ParamSpec): Flag<string | undefined> {
  const values =
    spec.kind === 'enum' ? spec.values : spec.kind === 'list' && spec.item.type === 'enum' ? spec.item.values : null;
  const placeholder =
    spec.kind === 'list'
      ? '<list>'
      : spec.kind === 'boolean'
        ? '<true|false>'
        : spec.kind === 'datetime'
          ? '<date>'
          : '<value>';
  return {
    option: () => {
      const option = new Option(
        `--${kebab(name)} ${placeholder}`,
        `${spec.description}${values && values.length <= 20 ? ` (${values.join(', ')})` : ''}`,
      );
      if (spec.kind === 'list')
        option.argParser((value: string, previous?: string) => (previous ? `${previous},${value}` : value));
      return option;
    },
  };
}

/** The flags of a query's parameters, by their API names, but those the command has flags of its own for. */
const paramFlags = (params: Record<string, ParamSpec>, skip: readonly string[] = []) =>
  Object.fromEntries(
    Object.entries(params).flatMap(([name, spec]) => (skip.includes(name) ? [] : [[name, paramFlag(name, spec)]])),
  );

const common = {
  url: settingFlag(CLIENT_SETTINGS.url),
  key: settingFlag(CLIENT_SETTINGS.key),
  profile: settingFlag(CLIENT_SETTINGS.profile),
  output: choice(
    '-o, --output <format>',
    'table (default on a terminal), json (default otherwise), ndjson, csv, yaml',
    outputFormats,
  ),
  fields: text('--fields <list>', 'only these fields (comma list; dotted paths reach into objects: meta.assetName)'),
  timeout: timeoutSeconds('give up on an answer after this long', 30),
} satisfies FlagsOf<CommonFlags>;

const listFlags = {
  ...common,
  all: boolean('--all', 'every record, streamed (the export when the server has it, else cursors or pages)'),
} satisfies FlagsOf<ListFlags>;

const lists = Object.entries(LISTS).map(([name, list]) =>
  defineCommand(name, {
    description: `List ${name} (one page, or every one with --all).`,
    flags: listFlags,
    // --format is the export's, asked for by --all; --fields is the command's own.
    generated: paramFlags(list.spec.params, ['format', 'fields']),
    action: async (flags, { io }, query) =>
      (await import('../api.js')).runList({ name: name as ListName, ...list }, flags, query, io),
  }),
);

const asset = defineCommand('asset', {
  description: 'One asset by its id.',
  arguments: { id: argument('<id>', 'the asset id') },
  flags: common,
  generated: paramFlags(getAssetSpec.params),
  action: async ({ id, ...flags }, { io }, query) => (await import('../api.js')).showAsset(id, flags, query, io),
});

/** The table columns of a change without --fields. */
const CHANGE_COLUMNS = ['at', 'type', 'vulnerabilityId', 'riskId', 'fields', 'cause.kind', 'assetId'] as const;

const intervalSeconds = (value: string): number => {
  if (!/^\d+(\.\d+)?$/.test(value) || Number(value) <= 0)
    throw new UserError(`--interval must be a number of seconds above 0 (5, 0.5): ${value}`);
  return Number(value);
};

const changesFlags = {
  ...common,
  follow: boolean(
    '--follow',
    'keep reading: each change as one NDJSON line as it is written, until SIGINT or SIGTERM (exit 0)',
  ),
  interval: parsed(
    '--interval <seconds>',
    'with --follow: the wait between two looks once caught up (default 5)',
    intervalSeconds,
  ),
} satisfies FlagsOf<ChangesFlags>;

const changes = defineCommand('changes', {
  description:
    "The tenant's change log: every change up to now (the cursor to go on from is printed on stderr), or with " +
    '--follow every change as it is written.',
  flags: changesFlags,
  // The query of the change log, cursor and batch size included; --format is no flag of this command.
  generated: paramFlags(listChangesSpec.params, ['format']),
  helpAfter:
    '\nWithout --cursor, from the start of the log. A cursor is the "next: --cursor" line an earlier run\n' +
    'printed on stderr, or the Secinv-Changes-Cursor header of an export; one older than the retention fails\n' +
    '(410 gone): read the inventory again. Batches of 1000 unless --per-page says otherwise.',
  action: async (flags, { io }, query) => (await import('../api.js')).runChanges(CHANGE_COLUMNS, flags, query, io),
});

const metrics = defineCommand('metrics', {
  description:
    'Remediation over time: `findings` (open, opened, resolved, overdue per interval, by severity) or ' +
    '`remediation` (days to fix and the share within the SLA, by severity).',
  arguments: { kind: argument('<kind>', 'findings or remediation') },
  flags: common,
  generated: paramFlags(findingMetricsSpec.params),
  action: async ({ kind, ...flags }, { io }, query) => {
    if (kind !== 'findings' && kind !== 'remediation')
      throw new UserError(`the metrics are findings or remediation, not '${kind}'`);
    if (kind === 'remediation' && 'interval' in query)
      throw new UserError("--interval is the findings metrics' (day, week, month): remediation has none");
    return (await import('../api.js')).runMetrics(kind, flags, query, io);
  },
});

const configureFlags = {
  profile: text('--profile <name>', 'the profile', CLIENT_SETTINGS.profile.fallback),
  url: text('--url <url>', CLIENT_SETTINGS.url.help),
  key: text('--key <key>', 'the key (else read from standard input, not echoed on a terminal)'),
} satisfies FlagsOf<ConfigureFlags>;

const configure = defineCommand('configure', {
  description: 'Save the server and key of a profile (file mode 0600); the key is read from --key or standard input.',
  flags: configureFlags,
  action: async (flags, { io }) => (await import('../api.js')).configureProfile(flags, io),
});

export default defineGroup('api', 'Ask a running secinv server, with a tenant key (profiles: secinv api configure).', [
  ...lists,
  asset,
  changes,
  metrics,
  configure,
]);
