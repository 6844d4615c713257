// A tenant's VEX statements and the exemptions they become. Statements are stored as loaded; the exemptions are
// re-matched (which assets each statement's product names) whenever the tenant's findings may have changed, so a VEX
// document loaded before the scan it speaks about still applies to it. The rules are src/domain/vex.ts.
import { sql, type Kysely } from 'kysely';
import {
  inVersions,
  isExempting,
  latestStatements,
  parseProduct,
  productText,
  purlVersion,
  vexExemption,
  vexExemptionId,
  type VexDocument,
  type VexStatement,
} from '../../domain/vex.js';
import { fromTenant } from '../tx/tenant.js';
import type { Database } from '../db/tables.js';
import type { VexDocumentMatch } from '../types.js';

const CHUNK = 500;

/** Replaces a document's statements (and drops the exemptions they made, which the next re-match makes again). */
export async function replaceVexDocument(db: Kysely<Database>, tenantId: string, document: VexDocument): Promise<void> {
  const before = await fromTenant(db, 'vex_statements', tenantId)
    .select('vulnerability_id')
    .distinct()
    .where('vex_statements.document_id', '=', document.documentId)
    .execute();
  await deleteExemptions(
    db,
    tenantId,
    before.map((r) => vexExemptionId(tenantId, document.documentId, r.vulnerability_id)),
  );
  await db
    .deleteFrom('vex_statements')
    .where('tenant_id', '=', tenantId)
    .where('document_id', '=', document.documentId)
    .execute();
  const rows = latestStatements(document.statements).map((s) => ({
    tenant_id: tenantId,
    document_id: document.documentId,
    vulnerability_id: s.vulnerabilityId,
    product: productText(s.product),
    exempting: isExempting(s.status) ? 1 : 0,
    statement: JSON.stringify(s),
  }));
  for (let i = 0; i < rows.length; i += CHUNK)
    await db
      .insertInto('vex_statements')
      .values(rows.slice(i, i + CHUNK))
      .execute();
}

async function deleteExemptions(db: Kysely<Database>, tenantId: string, ids: readonly string[]): Promise<void> {
  for (let i = 0; i < ids.length; i += CHUNK)
    await db
      .deleteFrom('exemptions')
      .where('tenant_id', '=', tenantId)
      .where('exemption_id', 'in', ids.slice(i, i + CHUNK))
      .execute();
}

export const hasVexStatements = async (db: Kysely<Database>, tenantId: string): Promise<boolean> =>
  (await fromTenant(db, 'vex_statements', tenantId).select('document_id').limit(1).executeTakeFirst()) !== undefined;

/**
 * The assets whose findings list a package of the purl (without its version), each with the version it has. The purls
 * are stored with their versions, so the package is their text up to the `@`; LIKE (case-blind in SQLite) only narrows.
 */
async function packageVersions(
  db: Kysely<Database>,
  tenantId: string,
  purl: string,
): Promise<{ assetId: string; version: string }[]> {
  const prefix = `${purl}@`;
  const pattern = `${prefix.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
  const rows = await fromTenant(db, 'vulnerability_packages', tenantId)
    .select(['vulnerability_packages.asset_id', 'vulnerability_packages.purl'])
    .distinct()
    .where(sql<boolean>`vulnerability_packages.purl like ${pattern} escape '\\'`)
    .execute();
  return rows.flatMap((r) => {
    const version = r.purl !== null && r.purl.startsWith(prefix) ? purlVersion(r.purl) : null;
    return version === null ? [] : [{ assetId: r.asset_id, version }];
  });
}

/** Which assets each product names: packages by purl (through the findings), images by digest, assets by id. */
async function matchProducts(db: Kysely<Database>, tenantId: string, products: Set<string>) {
  const matched = new Map<string, Set<string>>();
  const add = (product: string, assetId: string) => {
    const set = matched.get(product) ?? new Set<string>();
    set.add(assetId);
    matched.set(product, set);
  };
  const purls: string[] = [];
  for (const text of products) {
    const product = parseProduct(text);
    if (product.kind === 'purl') purls.push(product.key);
    else if (product.kind === 'versions') {
      for (const r of await packageVersions(db, tenantId, product.package))
        if (inVersions(r.version, product)) add(text, r.assetId);
    } else if (product.kind === 'image') {
      // An image asset's resource id ends with its digest (repository@sha256:…).
      const rows = await fromTenant(db, 'assets', tenantId)
        .select('assets.id')
        .where('assets.id', 'like', `%@${product.digest}`)
        .execute();
      for (const r of rows) add(text, r.id);
    } else {
      const row = await fromTenant(db, 'assets', tenantId)
        .select('assets.id')
        .where('assets.id', '=', product.id)
        .executeTakeFirst();
      if (row) add(text, row.id);
    }
  }
  for (let i = 0; i < purls.length; i += CHUNK) {
    const rows = await fromTenant(db, 'vulnerability_packages', tenantId)
      .select(['vulnerability_packages.asset_id', 'vulnerability_packages.purl'])
      .distinct()
      .where('vulnerability_packages.purl', 'in', purls.slice(i, i + CHUNK))
      .execute();
    for (const r of rows) add(`purl:${r.purl ?? ''}`, r.asset_id);
  }
  return matched;
}

/**
 * Makes the tenant's VEX exemptions agree with its statements and assets: one exemption per (document, vulnerability)
 * whose exempting statements match an asset; none (and any earlier one removed) when they match none. Returns what
 * each document matched, and whether any exemption changed.
 */
export async function rematchVex(
  db: Kysely<Database>,
  tenantId: string,
): Promise<{ documents: Map<string, VexDocumentMatch>; changed: boolean }> {
  const rows = await fromTenant(db, 'vex_statements', tenantId)
    .select(['document_id', 'vulnerability_id', 'product', 'exempting', 'statement'])
    .orderBy('document_id')
    .orderBy('vulnerability_id')
    .orderBy('product')
    .execute();
  const matched = await matchProducts(
    db,
    tenantId,
    new Set(rows.filter((r) => r.exempting === 1).map((r) => r.product)),
  );
  const documents = new Map<string, VexDocumentMatch>();
  const groups = new Map<
    string,
    { documentId: string; vulnerabilityId: string; statements: VexStatement[]; assets: Set<string> }
  >();
  for (const r of rows) {
    const doc = documents.get(r.document_id) ?? { statements: 0, exempting: 0, unmatched: 0, exemptions: 0 };
    documents.set(r.document_id, doc);
    doc.statements += 1;
    const key = `${r.document_id}\u0000${r.vulnerability_id}`;
    const group = groups.get(key) ?? {
      documentId: r.document_id,
      vulnerabilityId: r.vulnerability_id,
      statements: [],
      assets: new Set<string>(),
    };
    groups.set(key, group);
    if (r.exempting !== 1) continue;
    doc.exempting += 1;
    const assets = matched.get(r.product);
    if (!assets) doc.unmatched += 1;
    else for (const a of assets) group.assets.add(a);
    group.statements.push({ ...(JSON.parse(r.statement) as VexStatement), product: parseProduct(r.product) });
  }

  const wanted = new Map<string, string | null>();
  for (const g of groups.values()) {
    const id = vexExemptionId(tenantId, g.documentId, g.vulnerabilityId);
    if (g.assets.size === 0) wanted.set(id, null);
    else {
      wanted.set(id, JSON.stringify(vexExemption(g.documentId, g.vulnerabilityId, g.statements, [...g.assets])));
      const doc = documents.get(g.documentId);
      if (doc) doc.exemptions += 1;
    }
  }
  const ids = [...wanted.keys()];
  const current = new Map<string, string>();
  for (let i = 0; i < ids.length; i += CHUNK) {
    const existing = await fromTenant(db, 'exemptions', tenantId)
      .select(['exemption_id', 'doc'])
      .where('exemptions.exemption_id', 'in', ids.slice(i, i + CHUNK))
      .execute();
    for (const e of existing) current.set(e.exemption_id, e.doc);
  }
  const stale = ids.filter((id) => wanted.get(id) === null && current.has(id));
  const written = [...wanted].filter(
    (entry): entry is [string, string] => entry[1] !== null && current.get(entry[0]) !== entry[1],
  );
  await deleteExemptions(db, tenantId, stale);
  for (let i = 0; i < written.length; i += CHUNK)
    await db
      .insertInto('exemptions')
      .values(written.slice(i, i + CHUNK).map(([exemption_id, doc]) => ({ tenant_id: tenantId, exemption_id, doc })))
      .onConflict((oc) =>
        oc.columns(['tenant_id', 'exemption_id']).doUpdateSet((eb) => ({ doc: eb.ref('excluded.doc') })),
      )
      .execute();
  return { documents, changed: stale.length > 0 || written.length > 0 };
}
