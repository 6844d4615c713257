// `secinv keys create|list|revoke`: tenant API keys (src/cli/keys.ts).
import { loadConfig } from '../../config.js';
import { argument, database, defineCommand, defineGroup, integer, json, required, text } from '../command.js';

const create = defineCommand('create', {
  description: 'Create a key; prints the key alone on stdout (shown only once).',
  flags: {
    tenant: required('--tenant <tenantId>', 'tenant the key belongs to'),
    name: text('--name <name>', 'a label for the key'),
    expiresIn: integer('--expires-in <days>', 'days until the key expires', 1),
    scope: text(
      '--scope <scopes>',
      'what the key may do: read (the API), ingest (upload scans and read its own), or read,ingest',
      'read',
    ),
    db: database,
  },
  action: async (flags, { io }) => (await import('../keys.js')).keysCreate(loadConfig(flags), flags, io),
});

const list = defineCommand('list', {
  description: 'List the keys of a tenant (never the secret).',
  flags: {
    tenant: required('--tenant <tenantId>', 'tenant whose keys to list'),
    json,
    db: database,
  },
  action: async (flags, { io }) => (await import('../keys.js')).keysList(loadConfig(flags), flags, io),
});

const revoke = defineCommand('revoke', {
  description: 'Revoke a key by its id; takes effect on the next request.',
  arguments: { keyId: argument('<keyId>', 'the key id (first column of keys list)') },
  flags: { db: database },
  action: async ({ keyId, ...flags }, { io }) => (await import('../keys.js')).keysRevoke(loadConfig(flags), keyId, io),
});

export default defineGroup('keys', 'Create, list and revoke tenant API keys.', [create, list, revoke]);
