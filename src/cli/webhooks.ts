// `secinv webhooks …` (pipeline.md §5): endpoints on the database directly, as keys are. The secret is printed once,
// at create, and never again; a ping is sent from this process, checked and signed as the server's deliveries are.
import type { Config } from '../config.js';
import { UserError } from '../domain/errors.js';
import {
  filtersText,
  isSuccess,
  newWebhookId,
  newWebhookSecret,
  NO_FILTERS,
  parseChangeTypes,
  parseSeverity,
  pingId,
  urlProblem,
  type WebhookEndpoint,
  type WebhookFilters,
} from '../domain/webhooks.js';
import type { Storage } from '../storage/index.js';
import { checkDestination, DestinationRefused } from '../webhooks/destinations.js';
import { sendSigned } from '../webhooks/send.js';
import { waitingFor, withDatabase, type Io } from './io.js';
import { printTable } from './table.js';

const DESCRIPTION_MAX = 1000;

export interface CreateFlags {
  tenant: string;
  url: string;
  types?: string;
  minSeverity?: string;
  kev: boolean;
  exploit: boolean;
  description?: string;
}

/** The filters the flags give, each problem naming its flag. */
function filtersOf(flags: CreateFlags): WebhookFilters {
  const filters: WebhookFilters = { ...NO_FILTERS, kev: flags.kev, exploit: flags.exploit };
  if (flags.types !== undefined) {
    const parsed = parseChangeTypes(flags.types);
    if ('problem' in parsed) throw new UserError(`--types: ${parsed.problem}`);
    filters.types = parsed.types;
  }
  if (flags.minSeverity !== undefined) {
    const parsed = parseSeverity(flags.minSeverity);
    if ('problem' in parsed) throw new UserError(`--min-severity: ${parsed.problem}`);
    filters.minSeverity = parsed.severity;
  }
  return filters;
}

const ALLOW_HINT = 'set SECINV_WEBHOOK_ALLOW_PRIVATE=true to allow it';

export async function webhooksCreate(config: Readonly<Config>, flags: CreateFlags, io: Io): Promise<void> {
  const problem = urlProblem(flags.url);
  if (problem !== undefined) throw new UserError(`--url: ${problem}`);
  const filters = filtersOf(flags);
  const description = flags.description?.trim() || null;
  if (description !== null && description.length > DESCRIPTION_MAX)
    throw new UserError(`--description: longer than ${DESCRIPTION_MAX} characters`);
  try {
    await checkDestination(new URL(flags.url), config.webhookAllowPrivate);
  } catch (error) {
    if (error instanceof DestinationRefused) throw new UserError(`--url: ${error.message} (${ALLOW_HINT})`);
    throw error;
  }
  await withDatabase(config.databaseUrl, io, async (storage) => {
    if ((await storage.tenantOrganization(flags.tenant)) === undefined)
      throw new UserError(`--tenant: unknown tenant '${flags.tenant}' (import it first)`);
    const secret = newWebhookSecret();
    const hook = await storage.createWebhook(
      {
        id: newWebhookId(),
        tenantId: flags.tenant,
        url: new URL(flags.url).href,
        description,
        filters,
        secret,
        createdAt: new Date().toISOString(),
      },
      waitingFor(io),
    );
    // The id, then the secret, each alone on its line of stdout, for scripts; the rest is for people.
    io.stdout.write(`${hook.id}\n${secret}\n`);
    io.stderr.write(
      `created webhook ${hook.id} for tenant ${hook.tenantId} (${filtersText(filters)}); the signing secret is shown only once\n`,
    );
  });
}

const stateOf = (hook: WebhookEndpoint): string =>
  hook.enabled ? 'enabled' : `disabled ${hook.disabledAt ?? ''}: ${hook.disabledReason ?? '-'}`;

const pendingOf = (hook: WebhookEndpoint): string => {
  const pending = hook.pending;
  if (pending === null) return '-';
  if (pending.failures === 0) return `through ${pending.through}`;
  return `through ${pending.through}, ${pending.failures} failed since ${pending.failingSince ?? '-'}${pending.nextAttemptAt ? `, next ${pending.nextAttemptAt}` : ''}`;
};

export async function webhooksList(
  config: Readonly<Config>,
  flags: { tenant?: string; json: boolean },
  io: Io,
): Promise<void> {
  const hooks = await withDatabase(config.databaseUrl, io, (storage) => storage.listWebhooks(flags.tenant));
  if (flags.json) {
    io.stdout.write(`${JSON.stringify(hooks, null, 2)}\n`);
    return;
  }
  printTable(
    io,
    ['ID', 'TENANT', 'URL', 'FILTERS', 'POSITION', 'PENDING', 'STATE'],
    hooks.map((h) => [h.id, h.tenantId, h.url, filtersText(h.filters), String(h.position), pendingOf(h), stateOf(h)]),
  );
}

/** The endpoint, or a UserError naming the id. */
async function endpoint(storage: Storage, id: string): Promise<WebhookEndpoint> {
  const hook = await storage.getWebhook(id);
  if (hook === undefined) throw new UserError(`no webhook with id '${id}'`);
  return hook;
}

export async function webhooksDisable(
  config: Readonly<Config>,
  id: string,
  flags: { reason?: string },
  io: Io,
): Promise<void> {
  await withDatabase(config.databaseUrl, io, async (storage) => {
    const at = new Date().toISOString();
    const reason = flags.reason?.trim() || 'disabled by secinv webhooks disable';
    if (!(await storage.setWebhookEnabled(id, false, at, reason, waitingFor(io))))
      throw new UserError(`no webhook with id '${id}'`);
    io.stderr.write(`disabled webhook ${id}; its changes wait until it is enabled\n`);
  });
}

export async function webhooksEnable(config: Readonly<Config>, id: string, io: Io): Promise<void> {
  await withDatabase(config.databaseUrl, io, async (storage) => {
    if (!(await storage.setWebhookEnabled(id, true, new Date().toISOString(), null, waitingFor(io))))
      throw new UserError(`no webhook with id '${id}'`);
    io.stderr.write(`enabled webhook ${id}\n`);
  });
}

export async function webhooksDelete(config: Readonly<Config>, id: string, io: Io): Promise<void> {
  await withDatabase(config.databaseUrl, io, async (storage) => {
    if (!(await storage.deleteWebhook(id, waitingFor(io)))) throw new UserError(`no webhook with id '${id}'`);
    io.stderr.write(`deleted webhook ${id}\n`);
  });
}

export async function webhooksDeliveries(
  config: Readonly<Config>,
  id: string,
  flags: { limit: number; json: boolean },
  io: Io,
): Promise<void> {
  const attempts = await withDatabase(config.databaseUrl, io, async (storage) => {
    await endpoint(storage, id);
    return storage.webhookAttempts(id, flags.limit);
  });
  if (flags.json) {
    io.stdout.write(`${JSON.stringify(attempts, null, 2)}\n`);
    return;
  }
  printTable(
    io,
    ['AT', 'DELIVERY', 'KIND', 'CHANGES', 'STATUS', 'DURATION', 'ERROR'],
    attempts.map((a) => [
      a.at,
      a.deliveryId,
      a.kind,
      String(a.changes),
      a.status === null ? '-' : String(a.status),
      `${a.durationMs} ms`,
      a.error ?? '-',
    ]),
  );
}

export async function webhooksTest(config: Readonly<Config>, id: string, io: Io): Promise<void> {
  await withDatabase(config.databaseUrl, io, async (storage) => {
    const hook = await endpoint(storage, id);
    const secret = (await storage.webhookSecret(id))!;
    const deliveryId = pingId();
    const at = new Date();
    const result = await sendSigned(hook.url, secret, deliveryId, Buffer.from('{"type":"ping"}'), {
      timeoutMs: config.webhookTimeoutMs,
      allowPrivate: config.webhookAllowPrivate,
    });
    const attempt = { at: at.toISOString(), deliveryId, kind: 'ping' as const, changes: 0, ...result };
    await storage.recordWebhookAttempt(hook, attempt, waitingFor(io));
    const what = `${result.status === null ? 'no answer' : `HTTP ${result.status}`}${result.error ? ` (${result.error})` : ''} in ${Math.round(result.durationMs)} ms`;
    if (!isSuccess(result.status)) throw new UserError(`ping ${deliveryId} to webhook ${id}: ${what}`);
    io.stdout.write(`ping ${deliveryId}: ${what}\n`);
  });
}
