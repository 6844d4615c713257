// Which scanner wrote a file, told by its content (never its name), from the first bytes only: a report of any size is
// recognised without reading it whole. Everything that is not a supported report gets a specific reason, naming what
// the file looks like and what to do instead (docs/INGEST.md, "Formats").
import { none, isMany, getManyValues } from 'stream-chain/defs.js';
import { jsonParser } from 'stream-json/core/parser.js';

import type { IngestFormat } from './formats.js';

/** A format, or why the file is none; `otherProwlerOutput` marks Prowler's CSV and older JSON, which ask for OCSF. */
export type Detection = { format: IngestFormat } | { problem: string; otherProwlerOutput?: true };

/** How much of a file detection reads: enough for every format's identifying keys, which come first. */
export const HEAD_BYTES = 64 * 1024;

type Token = { name: string; value?: unknown };
type Frame = { kind: 'object'; key: string | null } | { kind: 'array'; index: number };

/** A JSON path for messages: `$.Results[0].Vulnerabilities[3]`. */
const pathOf = (stack: readonly Frame[]): string =>
  stack.reduce(
    (path, frame) =>
      frame.kind === 'object'
        ? frame.key === null
          ? path
          : `${path}.${frame.key}`
        : `${path}[${Math.max(frame.index, 0)}]`,
    '$',
  );

interface Shape {
  /** The top-level value's kind. */
  root: 'object' | 'array' | 'scalar' | null;
  /** Top-level keys (of the object, or of the array's first element) with their value, or its kind. */
  keys: Map<string, unknown>;
  /** The array's first element kind, for a top-level array. */
  firstItem: 'object' | 'array' | 'scalar' | null;
  /** Whether the whole document was read and is complete. */
  finished: boolean;
}

/**
 * Reads the document's top-level shape from its first bytes. `complete` says the bytes are the whole file, so a
 * document that stops early is truncated. Throws a message with the JSON path where the text stops being JSON.
 */
function readShape(text: string, complete: boolean): Shape {
  // Called with text, and once with `none` to flush at the end of the input (stream-chain's convention).
  const parse = jsonParser({ packValues: true, streamValues: false }) as unknown as (
    chunk: string | typeof none,
  ) => unknown;
  const shape: Shape = { root: null, keys: new Map(), firstItem: null, finished: false };
  const stack: Frame[] = [];
  let line = 1;
  // The element whose keys are collected: the root object, or the first element of a root array.
  const collecting = () =>
    shape.root === 'object'
      ? stack.length === 1
      : stack.length === 2 && shape.root === 'array' && stack[0]?.kind === 'array' && stack[0].index === 0;
  const value = (kind: 'object' | 'array' | 'scalar', scalar?: unknown) => {
    const top = stack[stack.length - 1];
    if (top === undefined) shape.root ??= kind;
    else if (top.kind === 'array') {
      top.index += 1;
      if (stack.length === 1 && top.index === 0) shape.firstItem = kind;
    } else if (collecting() && top.key !== null) shape.keys.set(top.key, kind === 'scalar' ? scalar : `<${kind}>`);
  };
  const take = (token: Token) => {
    switch (token.name) {
      case 'startObject':
        value('object');
        stack.push({ kind: 'object', key: null });
        break;
      case 'startArray':
        value('array');
        stack.push({ kind: 'array', index: -1 });
        break;
      case 'endObject':
      case 'endArray':
        stack.pop();
        if (stack.length === 0) shape.finished = true;
        break;
      case 'keyValue': {
        const top = stack[stack.length - 1];
        if (top?.kind === 'object') top.key = String(token.value);
        break;
      }
      case 'stringValue':
      case 'numberValue':
      case 'nullValue':
      case 'trueValue':
      case 'falseValue':
        value('scalar', token.name === 'numberValue' ? Number(token.value) : token.value);
        if (stack.length === 0) shape.finished = true;
        break;
    }
  };
  const feed = (chunk: string | typeof none) => {
    const out = parse(chunk);
    const tokens = isMany(out) ? (getManyValues(out) as Token[]) : out === none ? [] : [out as Token];
    tokens.forEach(take);
  };
  const truncated = () => new Error(`ends before the JSON is complete (truncated?), inside ${pathOf(stack)}`);
  let flushing = false;
  try {
    // Line by line, so a parse error names its line.
    for (const piece of text.split(/(?<=\n)/)) {
      feed(piece);
      line += piece.endsWith('\n') ? 1 : 0;
    }
    flushing = complete;
    if (complete) feed(none);
  } catch (error) {
    // The end of the input while a value is open fails the flush: the file stops early rather than being malformed.
    if (flushing) throw truncated();
    const reason = (error as Error).message.replace(/^Parser cannot parse input: /, '');
    throw new Error(`is not valid JSON at line ${line}, ${pathOf(stack)}: ${reason}`, { cause: error });
  }
  if (complete && !shape.finished) throw truncated();
  return shape;
}

const IMPORT_ARRAYS = [
  'tenants',
  'environments',
  'integrations',
  'assetGroups',
  'exemptions',
  'assets',
  'vulnerabilities',
  'risks',
];
const SUPPORTED = 'Trivy, Grype, CycloneDX, OpenVEX and Prowler OCSF JSON';
// SBOMs in the other standard, or in CycloneDX's XML: the same tools write CycloneDX JSON.
const SPDX =
  'is an SPDX document, which is not supported (nor does SPDX carry vulnerabilities): ask for CycloneDX JSON ' +
  '(`trivy --format cyclonedx`, `syft -o cyclonedx-json`)';
const CYCLONEDX_XML =
  'is CycloneDX XML, which is not supported: ask for CycloneDX JSON (`cyclonedx-maven-plugin` `outputFormat` `json`, ' +
  '`cyclonedx-npm --output-format JSON`, `syft -o cyclonedx-json`)';

const CSAF =
  'is a CSAF document (CSAF VEX), which is not supported: ask for the statements as OpenVEX or CycloneDX VEX JSON';
const SYFT =
  "is Syft's own JSON (an SBOM without vulnerabilities), which is not supported: scan it with " +
  '`grype sbom:FILE -o json`, or ask syft for `-o cyclonedx-json`';
const PROWLER_V2_JSON: Detection = {
  problem:
    "is Prowler v2's JSON output, which is not supported: run Prowler 3 or later with `--output-formats json-ocsf`",
  otherProwlerOutput: true,
};
const OPERATOR_READ = 'secinv reads VulnerabilityReport, ConfigAuditReport and ExposedSecretReport';
/** The trivy-operator resources secinv reads, and why the others are refused. */
export const OPERATOR_REFUSED: Record<string, string> = {
  ClusterComplianceReport: `is a trivy-operator ClusterComplianceReport (a compliance summary, no findings), which is not read: ${OPERATOR_READ}`,
  SbomReport: `is a trivy-operator SbomReport (packages without vulnerabilities), which is not read: ${OPERATOR_READ}`,
  ClusterSbomReport: `is a trivy-operator ClusterSbomReport (packages without vulnerabilities), which is not read: ${OPERATOR_READ}`,
};
export const OPERATOR_KINDS = ['VulnerabilityReport', 'ConfigAuditReport', 'ExposedSecretReport'];

function operatorKind(kind: string): Detection {
  if (OPERATOR_KINDS.includes(kind)) return { format: 'trivy-operator' };
  return {
    problem: OPERATOR_REFUSED[kind] ?? `is a trivy-operator ${kind || 'resource'}, which is not read: ${OPERATOR_READ}`,
  };
}

/** A JSON document that is one scalar: `null` is what a tool prints when it has no report to give. */
function scalarProblem(text: string): Detection | null {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  if (value === null)
    return { problem: 'is the JSON value `null`, not a report: the scanner wrote nothing (did it fail?)' };
  return typeof value === 'object' ? null : { problem: `is a single JSON ${typeof value}, not a report` };
}

function classifyObject(keys: Map<string, unknown>): Detection {
  const has = (key: string) => keys.has(key);
  const text = (key: string) => (typeof keys.get(key) === 'string' ? (keys.get(key) as string) : '');
  if (has('kind') && has('record')) return { problem: "is secinv's own import format: load it with `secinv import`" };
  if (has('catalogVersion') && has('vulnerabilities'))
    return { problem: 'is the CISA KEV catalog, a feed: load it with `secinv feeds load`' };
  if (/sarif/i.test(text('$schema')) || (has('runs') && has('version'))) {
    return {
      problem:
        'is SARIF, which is not supported: run the scanner with its JSON output (`trivy --format json`, `grype -o json`)',
    };
  }
  if (has('spdxVersion')) return { problem: SPDX };
  if (has('document') && (has('vulnerabilities') || has('product_tree'))) return { problem: CSAF };
  if (has('artifacts') && has('artifactRelationships')) return { problem: SYFT };
  if (has('ClusterName') || (has('SchemaVersion') && has('Resources'))) return { format: 'trivy-k8s' };
  if (has('SchemaVersion') && (has('ArtifactName') || has('ArtifactType') || has('Results')))
    return { format: 'trivy' };
  if (has('matches') && keys.get('matches') === '<array>') return { format: 'grype' };
  if (text('bomFormat') === 'CycloneDX') return { format: 'cyclonedx' };
  if (/openvex/i.test(text('@context'))) return { format: 'openvex' };
  if (/aquasecurity\.github\.io/.test(text('apiVersion'))) return operatorKind(text('kind'));
  if (text('kind') === 'List' && has('items')) return { format: 'trivy-operator' };
  if (has('Control ID') && has('Account Number')) return PROWLER_V2_JSON;
  if (
    [...keys.keys()].some((k) => IMPORT_ARRAYS.includes(k)) &&
    [...keys.keys()].every((k) => IMPORT_ARRAYS.includes(k))
  ) {
    return { problem: "is a bundle of secinv's own import format: load it with `secinv import`" };
  }
  const names = [...keys.keys()].slice(0, 8).join(', ');
  return {
    problem: `is JSON but not a report secinv reads (top-level keys: ${names || 'none'}); supported: ${SUPPORTED}`,
  };
}

function classifyArray(shape: Shape): Detection {
  // Prowler writes `[]` for a run without findings; no other supported format is an array.
  if (shape.firstItem === null) return { format: 'prowler-ocsf' };
  if (shape.firstItem !== 'object')
    return { problem: `is a JSON array of ${shape.firstItem === 'array' ? 'arrays' : 'values'}, not a scanner report` };
  if (shape.keys.get('class_uid') === 2004) return { format: 'prowler-ocsf' };
  const apiVersion = shape.keys.get('apiVersion');
  if (typeof apiVersion === 'string' && /aquasecurity\.github\.io/.test(apiVersion))
    return { format: 'trivy-operator' };
  if (shape.keys.has('Target') && (shape.keys.has('Vulnerabilities') || shape.keys.has('Type'))) {
    return {
      problem:
        'is a report of Trivy before 0.20 (a bare array of Results), which is not supported: run a current trivy ' +
        'with `--format json` (SchemaVersion 2)',
    };
  }
  if (shape.keys.has('CheckID') || shape.keys.has('FindingUniqueId')) {
    return {
      problem: "is Prowler's older JSON output, which is not supported: run prowler with `--output-formats json-ocsf`",
      otherProwlerOutput: true,
    };
  }
  return {
    problem: `is a JSON array of objects that are not OCSF Detection Findings (class_uid 2004); supported: ${SUPPORTED}`,
  };
}

function classifyText(text: string): Detection {
  const firstLine = text.split('\n', 1)[0]?.trim() ?? '';
  if (/Report Summary|[┌│└╭]|Total: \d+ \(/.test(text)) {
    return { problem: 'is Trivy table output, which is not supported: run trivy with `--format json`' };
  }
  if (/^NAME\s+INSTALLED\s+FIXED[ -]IN\s+TYPE\s+VULNERABILITY/.test(firstLine))
    return { problem: 'is Grype table output, which is not supported: run grype with `-o json`' };
  if (/^<(\?xml[^>]*>\s*<)?bom\b[^>]*cyclonedx\.org\/schema\/bom/.test(text.trimStart()))
    return { problem: CYCLONEDX_XML };
  if (/^SPDXVersion:/.test(firstLine)) return { problem: SPDX };
  if (firstLine.startsWith('#model_version') || /^cve,epss,percentile/i.test(firstLine)) {
    return { problem: 'is an EPSS feed file: load it with `secinv feeds load`' };
  }
  if (/^id,file,description,date_published/.test(firstLine))
    return { problem: 'is the Exploit-DB feed (files_exploits.csv): load it with `secinv feeds load`' };
  if (firstLine.includes(';') && /CHECK_ID/.test(firstLine)) {
    return {
      problem: 'is Prowler CSV output, which is not supported: run prowler with `--output-formats json-ocsf`',
      otherProwlerOutput: true,
    };
  }
  if (/^PROFILE,ACCOUNT_NUM,REGION,TITLE_ID,CHECK_RESULT/.test(firstLine)) {
    return {
      problem:
        'is Prowler v2 CSV output, which is not supported: run Prowler 3 or later with `--output-formats json-ocsf`',
      otherProwlerOutput: true,
    };
  }
  const start = JSON.stringify(firstLine.slice(0, 24));
  return { problem: `is not JSON (it starts with ${start}); supported: ${SUPPORTED}` };
}

/**
 * The format of a file from its first bytes (at most HEAD_BYTES, as openReport gives them: decompressed, UTF-8 without
 * a byte order mark); `complete` says they are the whole file.
 */
export function detectFormat(head: Buffer, complete: boolean): Detection {
  if (head.toString('utf8').trim() === '') return { problem: 'is empty' };
  // A multi-byte character may be cut at the end of the head; decode strictly without its last bytes.
  const decodable = complete ? head : head.subarray(0, Math.max(0, head.length - 3));
  let text: string;
  try {
    if (decodable.includes(0)) throw new Error('NUL');
    text = new TextDecoder('utf-8', { fatal: true }).decode(decodable);
  } catch {
    return { problem: 'is binary, not a text report' };
  }
  const first = text.trimStart()[0];
  if (first !== '{' && first !== '[') return (complete ? scalarProblem(text) : null) ?? classifyText(text);
  let shape: Shape;
  try {
    shape = readShape(text, complete);
  } catch (error) {
    // Prowler v2 wrote one JSON object per line, which is not one JSON document.
    if (/^\s*\{"Profile":.*"Account Number":.*"Control ID":/.test(text)) return PROWLER_V2_JSON;
    return { problem: (error as Error).message };
  }
  return shape.root === 'array' ? classifyArray(shape) : classifyObject(shape.keys);
}
