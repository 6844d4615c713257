// `secinv import`: reads JSON bundles and NDJSON files (docs/IMPORT.md), validates every record, and writes them in one
// transaction. Any invalid record means nothing is written; every problem (up to 100) is reported with its location.
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { importKinds, type ImportKind, type RecordsByKind } from '../domain/records.js';
import type { IngestWriter, Storage } from '../storage/index.js';
import { normalizeRecord } from './records.js';

export const MAX_REPORTED_PROBLEMS = 100;

export interface ImportProblem {
  /** `FILE:LINE` for NDJSON, `FILE` plus the array and index for a bundle. */
  location: string;
  path: string;
  message: string;
}

export interface ImportResult {
  counts: Record<ImportKind, number>;
  problems: ImportProblem[];
  /** Problems found in all, of which at most MAX_REPORTED_PROBLEMS are listed. */
  problemCount: number;
  written: boolean;
}

export interface ImportSource {
  name: string;
  open(): Readable;
}

export const fileSource = (path: string, stdin: Readable = process.stdin): ImportSource =>
  path === '-' ? { name: '<stdin>', open: () => stdin } : { name: path, open: () => createReadStream(path) };

const bundleArrays: Record<string, ImportKind> = {
  tenants: 'tenant',
  environments: 'environment',
  integrations: 'integration',
  assetGroups: 'assetGroup',
  exemptions: 'exemption',
  assets: 'asset',
  vulnerabilities: 'vulnerability',
  risks: 'risk',
};

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

type Emit = (location: string, kind: unknown, record: unknown, pathPrefix: string) => Promise<void>;

/** Yields each source's records, deciding bundle or NDJSON by content. */
async function readSource(source: ImportSource, emit: Emit, fail: (p: ImportProblem) => void): Promise<void> {
  const lines = createInterface({ input: source.open(), crlfDelay: Infinity });
  const iterator = lines[Symbol.asyncIterator]();
  let lineNumber = 0;
  const head: string[] = [];
  let firstParsed: unknown;
  let firstLine = 0;
  // Find the first non-blank line: a `kind` there means NDJSON, and the rest can stream.
  for (;;) {
    const next = await iterator.next();
    if (next.done) break;
    lineNumber += 1;
    head.push(next.value);
    if (next.value.trim() === '') continue;
    firstLine = lineNumber;
    try {
      firstParsed = JSON.parse(next.value);
    } catch {
      firstParsed = undefined;
    }
    break;
  }
  if (firstLine === 0) return; // an empty file holds no record

  const ndjsonLine = async (text: string, line: number): Promise<void> => {
    if (text.trim() === '') return;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      fail({ location: `${source.name}:${line}`, path: '', message: `not valid JSON (${(error as Error).message})` });
      return;
    }
    if (!isObject(value)) {
      fail({ location: `${source.name}:${line}`, path: '', message: 'must be an object {"kind": …, "record": {…}}' });
      return;
    }
    const unknown = Object.keys(value).filter((key) => key !== 'kind' && key !== 'record');
    if (unknown.length > 0) {
      fail({
        location: `${source.name}:${line}`,
        path: unknown[0]!,
        message: `unknown key (a line is {"kind": …, "record": {…}} and nothing else)`,
      });
      return;
    }
    await emit(`${source.name}:${line}`, value.kind, value.record, 'record');
  };

  if (isObject(firstParsed) && 'kind' in firstParsed) {
    await ndjsonLine(head[head.length - 1] as string, firstLine);
    for (;;) {
      const next = await iterator.next();
      if (next.done) return;
      lineNumber += 1;
      await ndjsonLine(next.value, lineNumber);
    }
  }

  // Not NDJSON at first sight: read the rest, and treat the file as a bundle when it is one JSON object.
  for (;;) {
    const next = await iterator.next();
    if (next.done) break;
    head.push(next.value);
  }
  let whole: unknown;
  try {
    whole = JSON.parse(head.join('\n'));
  } catch {
    whole = undefined;
  }
  if (isObject(whole) && !('kind' in whole)) {
    await readBundle(source.name, whole, emit, fail);
    return;
  }
  for (let i = 0; i < head.length; i += 1) await ndjsonLine(head[i] as string, i + 1);
}

async function readBundle(
  name: string,
  bundle: Record<string, unknown>,
  emit: Emit,
  fail: (p: ImportProblem) => void,
): Promise<void> {
  for (const key of Object.keys(bundle)) {
    // Own keys only: `in` would take `constructor`, `toString` or `__proto__` for bundle arrays.
    if (!Object.hasOwn(bundleArrays, key))
      fail({
        location: name,
        path: key,
        message: `unknown bundle array (expected ${Object.keys(bundleArrays).join(', ')})`,
      });
  }
  // Kinds in dependency order, so a bundle's tenants precede their records whatever the key order.
  for (const [key, kind] of Object.entries(bundleArrays)) {
    const list = bundle[key];
    if (list === undefined) continue;
    if (!Array.isArray(list)) {
      fail({ location: name, path: key, message: 'must be an array' });
      continue;
    }
    for (let i = 0; i < list.length; i += 1) await emit(name, kind, list[i], `${key}[${i}]`);
  }
}

export interface ImportOptions {
  dryRun: boolean;
  /** Called every so often with the number of records read so far (progress display). */
  onProgress?: (records: number) => void;
  /** Called at each point of the run (`record:N`, then the storage's: `read`, `settled`…), for fault tests. */
  onPhase?: ((phase: string) => void) | undefined;
}

export async function importSources(
  storage: Storage,
  sources: ImportSource[],
  options: ImportOptions,
): Promise<ImportResult> {
  const counts = Object.fromEntries(importKinds.map((k) => [k, 0])) as Record<ImportKind, number>;
  const problems: ImportProblem[] = [];
  let problemCount = 0;
  const fail = (p: ImportProblem) => {
    problemCount += 1;
    if (problems.length < MAX_REPORTED_PROBLEMS) problems.push(p);
  };

  let written = false;
  await storage
    .ingest(async (writer) => {
      const check = crossRecordChecks(writer, fail);
      let seen = 0;
      const emit: Emit = async (location, kind, record, pathPrefix) => {
        seen += 1;
        if (options.onProgress && seen % 1000 === 0) options.onProgress(seen);
        const at = (path: string) => (path === 'record' ? pathPrefix : pathPrefix + path.slice('record'.length));
        if (typeof kind !== 'string' || !(importKinds as readonly string[]).includes(kind)) {
          fail({ location, path: 'kind', message: `must be one of ${importKinds.join(', ')}` });
          return;
        }
        if (!isObject(record)) {
          fail({ location, path: pathPrefix, message: 'must be an object' });
          return;
        }
        const typedKind = kind as ImportKind;
        const organizationId = await check.organization(typedKind, record, location, at);
        if (organizationId === undefined) return;
        const result = normalizeRecord(typedKind, typedKind === 'tenant' ? record : { ...record, organizationId });
        if ('problems' in result) {
          for (const p of result.problems) fail({ location, path: at(p.path), message: p.message });
          return;
        }
        if (typedKind === 'vulnerability')
          await check.findingAsset(result.value as RecordsByKind['vulnerability'], location, at);
        if (typedKind === 'asset') check.assetImported(result.value as RecordsByKind['asset']);
        counts[typedKind] += 1;
        // After the first problem nothing will be committed, and a dry run commits nothing: validate without writing.
        if (problemCount === 0 && !options.dryRun) await writer.write(typedKind, result.value);
        options.onPhase?.(`record:${seen}`);
      };
      for (const source of sources) {
        try {
          await readSource(source, emit, fail);
        } catch (error) {
          fail({
            location: source.name,
            path: '',
            message: `cannot read: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
          });
        }
      }
      check.finish();
      if (problemCount > 0) throw new ImportRejected();
      written = !options.dryRun;
    }, options)
    .catch((error: unknown) => {
      if (!(error instanceof ImportRejected)) throw error;
    });
  return { counts, problems, problemCount, written };
}

class ImportRejected extends Error {}

/** Rules that look beyond one record: known tenants, their organizationId, and each finding's asset. */
function crossRecordChecks(writer: IngestWriter, fail: (p: ImportProblem) => void) {
  const organizations = new Map<string, string | null>();
  const importedAssets = new Set<string>();
  const storedAssets = new Map<string, boolean>();
  const missingAssets = new Map<string, ImportProblem>();
  const assetKey = (tenantId: string, assetId: string) => `${tenantId}\u0000${assetId}`;

  return {
    /** The organizationId the record must carry; undefined (after reporting) when the tenant is unknown or it differs. */
    async organization(
      kind: ImportKind,
      record: Record<string, unknown>,
      location: string,
      at: (p: string) => string,
    ): Promise<string | undefined> {
      const tenantId = record.tenantId;
      if (typeof tenantId !== 'string') {
        fail({
          location,
          path: at('record.tenantId'),
          message: tenantId === undefined || tenantId === null ? 'is required' : 'must be a string',
        });
        return undefined;
      }
      if (!organizations.has(tenantId))
        organizations.set(tenantId, (await writer.tenantOrganization(tenantId)) ?? null);
      if (kind === 'tenant') {
        // Every stored record carries its tenant's organizationId, so a tenant cannot move to another organization.
        const known = organizations.get(tenantId);
        const given = typeof record.organizationId === 'string' ? record.organizationId : null;
        if (known && given !== null && given !== known) {
          fail({
            location,
            path: at('record.organizationId'),
            message: `tenant '${tenantId}' already belongs to organization '${known}'`,
          });
          return undefined;
        }
        if (given !== null) organizations.set(tenantId, given);
        return given ?? '';
      }
      const organizationId = organizations.get(tenantId);
      if (!organizationId) {
        fail({
          location,
          path: at('record.tenantId'),
          message: `unknown tenant '${tenantId}' (import its tenant record first)`,
        });
        return undefined;
      }
      if (
        record.organizationId !== undefined &&
        record.organizationId !== null &&
        record.organizationId !== organizationId
      ) {
        fail({
          location,
          path: at('record.organizationId'),
          message: `must be the tenant's organizationId '${organizationId}'`,
        });
        return undefined;
      }
      return organizationId;
    },

    assetImported(record: RecordsByKind['asset']): void {
      const key = assetKey(record.tenantId, record.asset.id);
      importedAssets.add(key);
      missingAssets.delete(key);
    },

    /** A finding's asset must be in the store or in this import (possibly later in it). */
    async findingAsset(
      record: RecordsByKind['vulnerability'],
      location: string,
      at: (p: string) => string,
    ): Promise<void> {
      const key = assetKey(record.tenantId, record.vulnerability.assetId);
      if (importedAssets.has(key)) return;
      let stored = storedAssets.get(key);
      if (stored === undefined) {
        stored = await writer.assetExists(record.tenantId, record.vulnerability.assetId);
        if (storedAssets.size > 10_000) storedAssets.clear();
        storedAssets.set(key, stored);
      }
      if (!stored && !missingAssets.has(key)) {
        missingAssets.set(key, {
          location,
          path: at('record.assetId'),
          message: `asset '${record.vulnerability.assetId}' is not in tenant '${record.tenantId}'`,
        });
      }
    },

    finish(): void {
      for (const problem of missingAssets.values()) fail(problem);
    },
  };
}

const plurals = Object.fromEntries(Object.entries(bundleArrays).map(([plural, kind]) => [kind, plural])) as Record<
  ImportKind,
  string
>;

export const summaryLine = (result: ImportResult, dryRun: boolean): string => {
  const parts = importKinds.map((k) => `${result.counts[k]} ${plurals[k]}`);
  return `${dryRun ? 'validated (dry run, nothing written)' : 'imported'}: ${parts.join(', ')}`;
};
