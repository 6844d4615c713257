// The reading half of `secinv import`: lines or a bundle to normalised records, each checked on its own and against
// its tenant. It holds no database handle (the tenant's organization is asked for), so that a large import can run it
// in a thread of its own beside the writes (src/import/read-thread.ts).
import type { Readable } from 'node:stream';
import { importKinds, type ImportKind, type RecordsByKind } from '../domain/records.js';
import { normalizeRecord } from '../input/records.js';
import { openReport, readProblem, type OpenedReport } from '../input/source.js';
import { lines } from './lines.js';

export interface ImportProblem {
  /** `FILE:LINE` for NDJSON, `FILE` plus the array and index for a bundle. */
  location: string;
  path: string;
  message: string;
}

/** One record read: normalised, or the problems that keep it out. Every record read is one item, in file order. */
export type ReadItem =
  | { problems: ImportProblem[] }
  | {
      kind: ImportKind;
      value: RecordsByKind[ImportKind];
      location: string;
      /** Where a finding's assetId is, for the problem of an asset that is nowhere. */
      assetPath: string;
    };

export interface ReadableSource {
  name: string;
  open(): Readable;
}

export const bundleArrays: Record<string, ImportKind> = {
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
type Fail = (p: ImportProblem) => Promise<void>;

/**
 * Reads every source in order and hands each record to `sink`. `organizationOf` answers for tenants stored before
 * the run; a tenant record read in the run settles its tenant's organization from then on.
 */
export async function readSources(
  sources: readonly ReadableSource[],
  organizationOf: (tenantId: string) => Promise<string | undefined>,
  sink: (item: ReadItem) => Promise<void>,
): Promise<void> {
  const organization = organizationCheck(organizationOf);
  const fail: Fail = (problem) => sink({ problems: [problem] });
  const emit: Emit = async (location, kind, record, pathPrefix) => {
    const at = (path: string) => (path === 'record' ? pathPrefix : pathPrefix + path.slice('record'.length));
    if (typeof kind !== 'string' || !(importKinds as readonly string[]).includes(kind))
      return fail({ location, path: 'kind', message: `must be one of ${importKinds.join(', ')}` });
    if (!isObject(record)) return fail({ location, path: pathPrefix, message: 'must be an object' });
    const typedKind = kind as ImportKind;
    const checked = await organization(typedKind, record, location, at);
    if ('problem' in checked) return fail(checked.problem);
    const result = normalizeRecord(
      typedKind,
      typedKind === 'tenant' ? record : { ...record, organizationId: checked.organizationId },
    );
    if ('problems' in result)
      return sink({ problems: result.problems.map((p) => ({ location, path: at(p.path), message: p.message })) });
    return sink({ kind: typedKind, value: result.value, location, assetPath: at('record.assetId') });
  };
  for (const source of sources) {
    try {
      await readSource(source, emit, fail);
    } catch (error) {
      const problem = readProblem(error);
      if (problem === undefined) throw error;
      await fail({ location: source.name, path: '', message: problem });
    }
  }
}

/** The organizationId a record must carry, or the problem with its tenant. */
function organizationCheck(organizationOf: (tenantId: string) => Promise<string | undefined>) {
  const organizations = new Map<string, string | null>();
  return async (
    kind: ImportKind,
    record: Record<string, unknown>,
    location: string,
    at: (p: string) => string,
  ): Promise<{ organizationId: string } | { problem: ImportProblem }> => {
    const tenantId = record.tenantId;
    if (typeof tenantId !== 'string') {
      const message = tenantId === undefined || tenantId === null ? 'is required' : 'must be a string';
      return { problem: { location, path: at('record.tenantId'), message } };
    }
    if (!organizations.has(tenantId)) organizations.set(tenantId, (await organizationOf(tenantId)) ?? null);
    if (kind === 'tenant') {
      // Every stored record carries its tenant's organizationId, so a tenant cannot move to another organization.
      const known = organizations.get(tenantId);
      const given = typeof record.organizationId === 'string' ? record.organizationId : null;
      if (known && given !== null && given !== known) {
        const message = `tenant '${tenantId}' already belongs to organization '${known}'`;
        return { problem: { location, path: at('record.organizationId'), message } };
      }
      if (given !== null) organizations.set(tenantId, given);
      return { organizationId: given ?? '' };
    }
    const organizationId = organizations.get(tenantId);
    if (!organizationId) {
      const message = `unknown tenant '${tenantId}' (import its tenant record first)`;
      return { problem: { location, path: at('record.tenantId'), message } };
    }
    const given = record.organizationId;
    if (given !== undefined && given !== null && given !== organizationId)
      return {
        problem: {
          location,
          path: at('record.organizationId'),
          message: `must be the tenant's organizationId '${organizationId}'`,
        },
      };
    return { organizationId };
  };
}

/** Reads one source, deciding bundle or NDJSON by content. */
async function readSource(source: ReadableSource, emit: Emit, fail: Fail): Promise<void> {
  // As a report is opened: gzip undone, UTF-16 (Windows PowerShell's `>`) made UTF-8, a byte order mark dropped.
  const opened = await openReport(() => source.open());
  const iterator = lines(opened.bytes);
  let lineNumber = 0;
  const head: string[] = [];
  let firstParsed: unknown;
  let firstLine = 0;
  // Find the first non-blank line: a `kind` there means NDJSON, and the rest can stream.
  for (;;) {
    const next = await iterator.next();
    if (next.done) break;
    lineNumber += 1;
    const text = next.value;
    head.push(text);
    if (text.trim() === '') continue;
    firstLine = lineNumber;
    try {
      firstParsed = JSON.parse(text);
    } catch {
      firstParsed = undefined;
    }
    break;
  }
  // Nothing to import is a mistake to say (an empty pipe, a file cut to nothing), as ingest says of an empty report.
  if (firstLine === 0)
    return fail({ location: source.name, path: '', message: 'is empty: it holds no record (docs/IMPORT.md)' });

  const ndjsonLine = async (text: string, line: number): Promise<void> => {
    if (text.trim() === '') return;
    const location = `${source.name}:${line}`;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      return fail({ location, path: '', message: `not valid JSON (${(error as Error).message})` });
    }
    if (!isObject(value)) return fail({ location, path: '', message: 'must be an object {"kind": …, "record": {…}}' });
    const unknown = Object.keys(value).filter((key) => key !== 'kind' && key !== 'record');
    if (unknown.length > 0)
      return fail({
        location,
        path: unknown[0]!,
        message: `unknown key (a line is {"kind": …, "record": {…}} and nothing else)`,
      });
    await emit(location, value.kind, value.record, 'record');
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
  const bundle = isObject(whole) && !('kind' in whole) ? whole : undefined;
  // A scanner report or a feed gets one problem naming the command that reads it, not one per key or line.
  if (bundle === undefined || Object.keys(bundle).some((key) => !Object.hasOwn(bundleArrays, key))) {
    const other = await otherCommand(opened);
    if (other !== undefined) return fail({ location: source.name, path: '', message: other });
  }
  if (bundle !== undefined) return readBundle(source.name, bundle, emit, fail);
  for (let i = 0; i < head.length; i += 1) await ndjsonLine(head[i] as string, i + 1);
}

/**
 * What a file that is not an import file is, when `secinv ingest` or `secinv feeds load` reads it (told as ingest
 * tells formats apart): the problem to print, or undefined. Loaded only for such a file.
 */
async function otherCommand({ head, complete }: OpenedReport): Promise<string | undefined> {
  const { detectFormat } = await import('../input/detect.js');
  const found = detectFormat(head, complete);
  if ('format' in found)
    return `is \`${found.format}\` output, which \`secinv ingest --tenant ID FILE\` loads (\`secinv import\` reads secinv's own records)`;
  return found.problem.includes('`secinv feeds load`') ? found.problem : undefined;
}

async function readBundle(name: string, bundle: Record<string, unknown>, emit: Emit, fail: Fail): Promise<void> {
  if (Object.keys(bundle).length === 0)
    return fail({
      location: name,
      path: '',
      message: `is an empty bundle: it holds none of the arrays ${Object.keys(bundleArrays).join(', ')}`,
    });
  for (const key of Object.keys(bundle)) {
    // Own keys only: `in` would take `constructor`, `toString` or `__proto__` for bundle arrays.
    if (!Object.hasOwn(bundleArrays, key))
      await fail({
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
      await fail({ location: name, path: key, message: 'must be an array' });
      continue;
    }
    for (let i = 0; i < list.length; i += 1) await emit(name, kind, list[i], `${key}[${i}]`);
  }
}
