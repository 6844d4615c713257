// `secinv webhooks create|list|disable|enable|delete|deliveries|test`: alerts from the change log (src/cli/webhooks.ts,
// pipeline.md §5).
import { changeTypes } from '../../domain/changes.js';
import { loadConfig } from '../../config.js';
import { argument, boolean, database, defineCommand, defineGroup, integer, json, required, text } from '../command.js';

const id = { id: argument('<webhookId>', 'the endpoint id (first column of webhooks list)') };

const create = defineCommand('create', {
  description:
    "Create an endpoint that is sent the tenant's changes from now on; prints its id, then its signing secret (shown only once).",
  flags: {
    tenant: required('--tenant <tenantId>', 'tenant whose changes it is sent'),
    url: required('--url <url>', 'where to POST them (http:// or https://)'),
    types: text('--types <types>', `change types, comma-separated (default: every type): ${changeTypes.join(', ')}`),
    minSeverity: text('--min-severity <severity>', 'findings and risks at or above it (assets pass)'),
    kev: boolean('--kev', 'findings that are in CISA KEV (or just became)', false),
    exploit: boolean('--exploit', 'findings with a public exploit (or that just got one)', false),
    description: text('--description <text>', 'a label for the endpoint'),
    db: database,
  },
  action: async (flags, { io }) => (await import('../webhooks.js')).webhooksCreate(loadConfig(flags), flags, io),
});

const list = defineCommand('list', {
  description: 'List the endpoints (of a tenant): filters, state, position, the batch being tried (never the secret).',
  flags: { tenant: text('--tenant <tenantId>', "only this tenant's"), json, db: database },
  action: async (flags, { io }) => (await import('../webhooks.js')).webhooksList(loadConfig(flags), flags, io),
});

const disable = defineCommand('disable', {
  description: 'Stop sending to an endpoint; its changes wait, and enable sends them.',
  arguments: id,
  flags: { reason: text('--reason <text>', 'why, shown by webhooks list'), db: database },
  action: async ({ id, ...flags }, { io }) =>
    (await import('../webhooks.js')).webhooksDisable(loadConfig(flags), id, flags, io),
});

const enable = defineCommand('enable', {
  description: 'Send to an endpoint again, from where it stopped (a batch that failed is tried again now).',
  arguments: id,
  flags: { db: database },
  action: async ({ id, ...flags }, { io }) =>
    (await import('../webhooks.js')).webhooksEnable(loadConfig(flags), id, io),
});

const remove = defineCommand('delete', {
  description: 'Delete an endpoint and its attempts.',
  arguments: id,
  flags: { db: database },
  action: async ({ id, ...flags }, { io }) =>
    (await import('../webhooks.js')).webhooksDelete(loadConfig(flags), id, io),
});

const deliveries = defineCommand('deliveries', {
  description: "An endpoint's recent attempts, newest first: time, delivery id, changes, status, duration, error.",
  arguments: id,
  flags: { limit: integer('--limit <n>', 'how many', 1, 20), json, db: database },
  action: async ({ id, ...flags }, { io }) =>
    (await import('../webhooks.js')).webhooksDeliveries(loadConfig(flags), id, flags, io),
});

const test = defineCommand('test', {
  description: 'Send a signed ping to an endpoint now and print what it answered (exit 1 unless 2xx).',
  arguments: id,
  flags: { db: database },
  action: async ({ id, ...flags }, { io }) => (await import('../webhooks.js')).webhooksTest(loadConfig(flags), id, io),
});

export default defineGroup('webhooks', 'Alerts: send the change log to HTTP endpoints, signed, in order.', [
  create,
  list,
  disable,
  enable,
  remove,
  deliveries,
  test,
]);
