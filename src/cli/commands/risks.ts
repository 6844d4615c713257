// `secinv risks derive|dismiss|reopen` (src/cli/risks.ts).
import { loadConfig } from '../../config.js';
import { argument, database, defineCommand, defineGroup, required, requiredChoice, text } from '../command.js';

/** `--as` of `risks dismiss`, and the lifecycle state each gives. */
const DISMISSALS = { accepted: 'DISMISSED_ACCEPTED', 'not-a-risk': 'DISMISSED_NOT_A_RISK' } as const;

const tenant = required('--tenant <tenantId>', 'the tenant');
const riskId = argument('<riskId>', 'the risk id');

const derive = defineCommand('derive', {
  description: 'Re-run the risk rules over every asset of a tenant (ingest and feeds load run them themselves).',
  flags: { tenant, db: database },
  action: async (flags, { io }) => (await import('../risks.js')).risksDerive(loadConfig(flags), flags, io),
});

const dismiss = defineCommand('dismiss', {
  description:
    'Dismiss a risk: it stays dismissed across re-derivations, also after it leaves and comes back; with --until, until then.',
  arguments: { riskId },
  flags: {
    tenant,
    as: requiredChoice(
      '--as <reason>',
      'accepted (DISMISSED_ACCEPTED) or not-a-risk (DISMISSED_NOT_A_RISK)',
      Object.keys(DISMISSALS) as (keyof typeof DISMISSALS)[],
    ),
    until: text(
      '--until <date>',
      'reopen by itself then: YYYY-MM-DD (00:00:00Z) or an RFC 3339 date-time, in the future (without: never)',
    ),
    db: database,
  },
  action: async ({ riskId, ...flags }, { io }) =>
    (await import('../risks.js')).risksSetState(
      loadConfig(flags),
      riskId,
      { tenant: flags.tenant, state: DISMISSALS[flags.as], until: flags.until },
      io,
    ),
});

const reopen = defineCommand('reopen', {
  description: 'Reopen a dismissed risk (lifecycleState OPEN).',
  arguments: { riskId },
  flags: { tenant, db: database },
  action: async ({ riskId, ...flags }, { io }) =>
    (await import('../risks.js')).risksSetState(loadConfig(flags), riskId, { tenant: flags.tenant, state: 'OPEN' }, io),
});

export default defineGroup('risks', 'Derive risks by the rules of docs/RISKS.md; dismiss and reopen them.', [
  derive,
  dismiss,
  reopen,
]);
