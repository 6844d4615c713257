// `secinv tenants create|list` (src/cli/tenants.ts).
import { loadConfig } from '../../config.js';
import { database, defineCommand, defineGroup, json, required, text } from '../command.js';

const create = defineCommand('create', {
  description: 'Create a tenant; prints its id alone on stdout.',
  flags: {
    name: required('--name <name>', "the tenant's name"),
    id: text('--id <uuid>', 'the tenant id (default: a new UUID)'),
    organizationId: text('--organization-id <uuid>', 'the organization it belongs to (default: a new UUID)'),
    db: database,
  },
  action: async (flags, { io }) => (await import('../tenants.js')).tenantsCreate(loadConfig(flags), flags, io),
});

const list = defineCommand('list', {
  description: 'List every tenant with the number of its assets, findings, risks and keys.',
  flags: { json, db: database },
  action: async (flags, { io }) => (await import('../tenants.js')).tenantsList(loadConfig(flags), flags, io),
});

export default defineGroup('tenants', 'Create and list tenants.', [create, list]);
