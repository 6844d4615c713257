// `secinv tenants create|list` (src/cli/tenants.ts).
import { loadConfig } from '../../config.js';
import { boolean, database, defineCommand, defineGroup, json, required, text } from '../command.js';

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

const days = (severity: string) =>
  text(`--${severity.toLowerCase()} <days>`, `whole days to fix a ${severity} finding, or none (no due date)`);

const setSla = defineCommand('set-sla', {
  description:
    "Set a tenant's SLA: days to fix a finding per severity (default CRITICAL 15, HIGH 30, MEDIUM 90, LOW 180), which " +
    'sets its dueAt. Severities not given keep their days; prints the SLA as JSON.',
  flags: {
    tenant: required('--tenant <id>', 'the tenant'),
    critical: days('CRITICAL'),
    high: days('HIGH'),
    medium: days('MEDIUM'),
    low: days('LOW'),
    informational: days('INFORMATIONAL'),
    unknown: days('UNKNOWN'),
    defaults: boolean('--defaults', 'start from the default SLA instead of the current one', false),
    db: database,
  },
  action: async (flags, { io }) => (await import('../tenants.js')).tenantsSetSla(loadConfig(flags), flags, io),
});

export default defineGroup('tenants', "Create and list tenants, and set a tenant's SLA.", [create, list, setSla]);
