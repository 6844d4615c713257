// An OpenVEX document as VEX statements (docs/INGEST.md, "OpenVEX"): each statement's products (a purl in `@id`, in
// `identifiers.purl`, or a bare string; the `subcomponents` when it lists them) become statement products; `fixed`
// and `not_affected` exempt, `affected` and `under_investigation` create nothing.
import { basename } from 'node:path';
import { ociDigest, purlKey, type VexProduct, type VexStatement } from '../domain/vex.js';
import { LONG_KEY_BYTES, SHORT_KEY_BYTES } from '../domain/limits.js';
import { isObject, objects, overLimit, text, texts, timestamp, type Json } from '../input/json.js';
import { formatPath, streamJson } from '../input/stream.js';
import type { Ingested } from './scan.js';
import type { FieldProblem } from './trivy.js';

const STATUSES = new Set(['not_affected', 'affected', 'fixed', 'under_investigation']);

/** The purl a product names: a bare string, `@id`, or `identifiers.purl`. */
const purlOf = (product: unknown): string | null => {
  if (typeof product === 'string') return text(product);
  if (!isObject(product)) return null;
  const id = text(product['@id']);
  if (id !== null && id.startsWith('pkg:')) return id;
  return isObject(product.identifiers) ? text(product.identifiers.purl) : null;
};

function productOf(purl: string | null): VexProduct | null {
  if (purl === null) return null;
  const digest = ociDigest(purl);
  if (digest !== null) return { kind: 'image', digest };
  const key = purlKey(purl);
  return key === null ? null : { kind: 'purl', key };
}

export async function readOpenVex(
  bytes: AsyncIterable<Buffer>,
  problems: FieldProblem[],
  fileName: string,
): Promise<Ingested> {
  const raw: { value: unknown; path: string }[] = [];
  let root: Json = {};
  for await (const { path, value } of streamJson(bytes, [['statements', '*']])) {
    if (path.length === 0) root = isObject(value) ? value : {};
    else raw.push({ value, path: formatPath(path) });
  }
  const documentId = text(root['@id']) ?? basename(fileName);
  overLimit(documentId, SHORT_KEY_BYTES, text(root['@id']) === null ? '(the file name)' : '$.@id', problems);
  const documentTime = timestamp(root.timestamp);
  const statements: VexStatement[] = [];
  let unmatchable = 0;
  for (const { value: s, path } of raw) {
    if (!isObject(s)) {
      problems.push({ path, message: 'must be an object' });
      continue;
    }
    const vulnerability = typeof s.vulnerability === 'string' ? { name: s.vulnerability } : s.vulnerability;
    const id = isObject(vulnerability) ? (text(vulnerability.name) ?? text(vulnerability['@id'])) : null;
    if (id === null) {
      problems.push({ path: `${path}.vulnerability`, message: 'must name the vulnerability (`name`, else `@id`)' });
      continue;
    }
    if (overLimit(id, SHORT_KEY_BYTES, `${path}.vulnerability.name`, problems)) continue;
    const status = text(s.status);
    if (status === null || !STATUSES.has(status)) {
      problems.push({
        path: `${path}.status`,
        message: `must be one of ${[...STATUSES].join(', ')}, not ${JSON.stringify(s.status ?? null)}`,
      });
      continue;
    }
    const aliases = isObject(vulnerability) ? texts(vulnerability.aliases).filter((a) => a !== id) : [];
    const products = Array.isArray(s.products) ? s.products : [];
    for (const product of products) {
      // A product with subcomponents (an image and the packages in it) speaks of those packages.
      const subcomponents = isObject(product) ? objects(product.subcomponents) : [];
      const purls = subcomponents.length > 0 ? subcomponents.map(purlOf) : [purlOf(product)];
      for (const purl of purls) {
        const target = productOf(purl);
        if (target === null) {
          unmatchable += 1;
          continue;
        }
        if (target.kind === 'purl' && overLimit(target.key, LONG_KEY_BYTES, `${path}.products`, problems)) continue;
        statements.push({
          vulnerabilityId: id,
          aliases,
          product: target,
          status,
          justification: text(s.justification),
          detail: text(s.impact_statement) ?? text(s.status_notes),
          timestamp: timestamp(s.timestamp) ?? documentTime,
          updatedAt: timestamp(s.last_updated),
        });
      }
    }
  }
  if (raw.length === 0 && !Array.isArray(root.statements))
    problems.push({ path: '$.statements', message: 'must be an array of statements' });
  return { scans: [], vex: { documentId, statements }, unmatchable };
}
