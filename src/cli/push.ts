// `secinv push FILE…` (pipeline.md §3): the CI side of scans over HTTP. Each report is uploaded with the typed client,
// with an Idempotency-Key of its bytes and options so that a retried job never ingests it twice; with --wait (or
// --fail-on) the scans are waited for and their gates judged. Exit codes: 0 all succeeded and no rule hit, 1 a rule
// hit, 2 bad usage, 3 a scan failed, 4 the server could not be reached or the wait timed out.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { createClient, SecinvApiError, SecinvConnectionError, type Client, type Scan } from '../client/index.js';
import { loadClientSettings } from '../config.js';
import type { FindingSeverity } from '../domain/enums.js';
import { findingSeverities } from '../domain/enums.js';
import { fileErrorReason, UserError } from '../domain/errors.js';
import type { Io } from './io.js';
import { resolveConnection } from './profiles.js';
import { printTable } from './table.js';

export interface PushFlags {
  url: string | undefined;
  key: string | undefined;
  profile: string | undefined;
  format: string;
  asset: string | undefined;
  provider: string | undefined;
  region: string | undefined;
  cluster: string | undefined;
  integration: string | undefined;
  resolve: boolean;
  wait: boolean | undefined;
  timeout: number;
  failOn: string | undefined;
}

/** A failure that says why in its exit code (src/cli/main.ts returns it). */
const exit = (code: number, message: string) => Object.assign(new UserError(message), { exitCode: code });

/** A rule of --fail-on over a scan's gate. */
export type GateRule = { kind: 'open' | 'added'; severity: FindingSeverity } | { kind: 'kev' | 'exploit' };

/** `open:HIGH,added:CRITICAL,kev` as rules, or the problem with it (exit 2). */
export function parseRules(text: string): GateRule[] {
  return text.split(',').map((item) => {
    const [kind, severity] = item.trim().split(':');
    if ((kind === 'kev' || kind === 'exploit') && severity === undefined) return { kind };
    const level = severity?.toUpperCase();
    if ((kind === 'open' || kind === 'added') && findingSeverities.includes(level as FindingSeverity))
      return { kind, severity: level as FindingSeverity };
    throw exit(
      2,
      `--fail-on: '${item.trim()}' is not a rule: open:SEVERITY, added:SEVERITY, kev or exploit ` +
        `(SEVERITY one of ${findingSeverities.join(', ')})`,
    );
  });
}

const atOrAbove = (severity: FindingSeverity) => findingSeverities.slice(0, findingSeverities.indexOf(severity) + 1);

/** How many findings of the scan's gate each rule is hit by (0: not hit). */
export function judge(scan: Scan, rules: readonly GateRule[]): { rule: string; count: number }[] {
  const gate = scan.gate;
  if (gate === null) return [];
  return rules.map((rule) => {
    if (!('severity' in rule)) return { rule: rule.kind, count: gate[rule.kind] };
    const counts = gate[rule.kind];
    const count = atOrAbove(rule.severity).reduce((n, severity) => n + counts[severity], 0);
    return { rule: `${rule.kind}:${rule.severity}`, count };
  });
}

/**
 * The open findings behind the rules that name them (open:S, kev, exploit), as a table: read with the same key, so
 * shown only when it has the `read` scope (an upload-only key sees the counts above).
 */
async function offendingFindings(client: Client, scan: Scan, rules: readonly GateRule[], io: Io): Promise<void> {
  const assetIds = scan.summary?.assetIds ?? [];
  if (assetIds.length === 0 || assetIds.length > 10) return;
  const queries = rules.flatMap((rule): Record<string, unknown>[] => {
    if (rule.kind === 'open') return [{ severityLevels: atOrAbove(rule.severity) }];
    if (rule.kind === 'kev') return [{ hasKev: true }];
    return rule.kind === 'exploit' ? [{ hasExploit: true }] : [];
  });
  const rows = new Map<string, string[]>();
  try {
    for (const query of queries)
      for (const finding of (await client.vulnerabilities.list({ assetIds, perPage: 100, ...query })).data)
        rows.set(`${finding.assetId} ${finding.vulnerabilityId}`, [
          finding.vulnerabilityId,
          finding.severityLevel,
          finding.packages.map((p) => `${p.packageName ?? '?'}@${p.installedVersion ?? '?'}`).join(' '),
          finding.assetId,
        ]);
  } catch (error) {
    if (error instanceof SecinvApiError && error.status === 403) {
      io.stdout.write('(the key has no read scope: the findings themselves are not listed)\n');
      return;
    }
    throw error;
  }
  if (rows.size > 0) printTable(io, ['ID', 'SEVERITY', 'PACKAGE', 'ASSET'], [...rows.values()]);
}

export async function pushCommand(files: string[], flags: PushFlags, io: Io): Promise<void> {
  const rules = flags.failOn === undefined ? [] : parseRules(flags.failOn);
  const wait = flags.wait === true || rules.length > 0;
  const connection = resolveConnection(loadClientSettings(flags), io);
  const client = createClient({ baseUrl: connection.url, apiKey: connection.key, timeoutMs: flags.timeout * 1000 });
  const options = {
    format: flags.format,
    provider: flags.provider,
    region: flags.region,
    assetId: flags.asset,
    cluster: flags.cluster,
    integrationId: flags.integration,
    ...(flags.resolve ? {} : { resolve: false }),
  };
  const reached = async <T>(work: () => Promise<T>): Promise<T> => {
    try {
      return await work();
    } catch (error) {
      if (error instanceof SecinvConnectionError) throw exit(4, error.message);
      if (error instanceof SecinvApiError)
        throw exit(
          error.status === 401 || error.status === 403 ? 1 : 3,
          `${connection.url} answered ${error.status} ${error.code}: ${error.message}`,
        );
      throw error;
    }
  };
  const scans: Scan[] = [];
  for (const file of files) {
    let report: Buffer;
    try {
      report = readFileSync(file);
    } catch (error) {
      throw new UserError(`cannot read ${file}: ${fileErrorReason(error)}`);
    }
    const name = basename(file);
    const idempotencyKey = createHash('sha256')
      .update(report)
      .update(JSON.stringify([name, options]))
      .digest('hex');
    const scan = await reached(() => client.scans.upload(report, { ...options, name, idempotencyKey } as never));
    io.stdout.write(`${scan.id} ${scan.status} ${file}\n`);
    scans.push(scan);
  }
  if (!wait) return;
  const deadline = Date.now() + flags.timeout * 1000;
  let failed = 0;
  let hit = 0;
  for (const queued of scans) {
    const scan = await reached(() => client.scans.wait(queued.id, { timeoutMs: Math.max(0, deadline - Date.now()) }));
    io.stdout.write(`${scan.id} ${scan.status} ${scan.name ?? ''}\n`);
    if (scan.status === 'failed') {
      failed += 1;
      for (const p of scan.problems)
        io.stderr.write(`${scan.name ?? scan.id}: ${p.path ? `${p.path}: ` : ''}${p.message}\n`);
      continue;
    }
    const summary = scan.summary;
    if (summary !== null)
      io.stderr.write(
        `${scan.name ?? scan.id}: ${scan.format ?? ''}, findings ${summary.findings.added} added, ${summary.findings.updated} updated, ` +
          `${summary.findings.unchanged} unchanged, ${summary.findings.resolved} resolved\n`,
      );
    const hits = judge(scan, rules).filter((h) => h.count > 0);
    if (hits.length > 0) {
      hit += 1;
      const err = { ...io, stdout: io.stderr };
      printTable(
        err,
        ['RULE', 'FINDINGS', 'SCAN'],
        hits.map((h) => [h.rule, String(h.count), scan.name ?? scan.id]),
      );
      await offendingFindings(client, scan, rules, err);
    }
  }
  if (failed > 0) throw exit(3, `${failed} of ${scans.length} scan${scans.length === 1 ? '' : 's'} failed`);
  if (hit > 0) throw exit(1, `--fail-on: ${hit} of ${scans.length} scan${scans.length === 1 ? '' : 's'} hit a rule`);
}
