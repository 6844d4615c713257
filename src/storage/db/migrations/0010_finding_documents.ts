// Migration 0010_finding_documents: a finding's stored document moves from `vulnerabilities` to a table of its own,
// and the feed intel it carried (`hasKev`, `hasExploit`, `knownExploit`, `exploits`) to a narrow `intel` column,
// spliced in when the finding is served (docs/DESIGN.md §44). Filters, sorts, counts and the feed loads then read and
// write rows of ~0.3 KB instead of ~2.4 KB, and a feed load never rewrites a document.
// Frozen: the SQL it ran when it was released, per dialect, and one step that splits each document. The step is
// written out here rather than calling the code that serves findings, so that it never changes with that code.
import { sql, type Kysely } from 'kysely';
import type { FrozenMigration } from './frozen.js';

const BATCH = 1000;

/** Splits every stored finding document into the document without its intel and the intel, 1,000 rows at a time. */
const splitDocuments = async (db: Kysely<unknown>): Promise<void> => {
  let after: [string, string, string] | null = null;
  for (;;) {
    const position = after;
    const rows: { tenant_id: string; asset_id: string; vulnerability_id: string; doc: Uint8Array }[] = (
      await sql<{ tenant_id: string; asset_id: string; vulnerability_id: string; doc: Uint8Array }>`
        select tenant_id, asset_id, vulnerability_id, doc from vulnerabilities
        ${position === null ? sql`` : sql`where (tenant_id, asset_id, vulnerability_id) > (${position[0]}, ${position[1]}, ${position[2]})`}
        order by tenant_id, asset_id, vulnerability_id limit ${BATCH}`.execute(db)
    ).rows;
    const last = rows[rows.length - 1];
    if (last === undefined) return;
    const documents: unknown[] = [];
    for (const row of rows) {
      const doc = JSON.parse(Buffer.from(row.doc).toString('utf8')) as Record<string, unknown>;
      const intel = {
        hasKev: doc.hasKev === true,
        hasExploit: doc.hasExploit === true,
        knownExploit: doc.knownExploit ?? null,
        exploits: Array.isArray(doc.exploits) ? doc.exploits : [],
      };
      delete doc.hasKev;
      delete doc.hasExploit;
      delete doc.knownExploit;
      delete doc.exploits;
      documents.push(
        sql`(${row.tenant_id}, ${row.asset_id}, ${row.vulnerability_id}, ${Buffer.from(JSON.stringify(doc))})`,
      );
      const none = !intel.hasKev && !intel.hasExploit && intel.knownExploit === null && intel.exploits.length === 0;
      if (!none)
        await sql`update vulnerabilities set intel = ${JSON.stringify(intel)} where tenant_id = ${row.tenant_id}
          and asset_id = ${row.asset_id} and vulnerability_id = ${row.vulnerability_id}`.execute(db);
    }
    await sql`insert into vulnerability_documents (tenant_id, asset_id, vulnerability_id, doc)
      values ${sql.join(documents)}`.execute(db);
    after = [last.tenant_id, last.asset_id, last.vulnerability_id];
  }
};

export const migration: FrozenMigration = {
  sqlite: [
    `create table if not exists "vulnerability_documents" ("tenant_id" text not null, "asset_id" text not null, "vulnerability_id" text not null, "doc" blob not null, constraint "vulnerability_documents_pkey" primary key ("tenant_id", "asset_id", "vulnerability_id"))`,
    `alter table "vulnerabilities" add column "intel" text`,
    splitDocuments,
    `alter table "vulnerabilities" drop column "doc"`,
  ],
  postgres: [
    `create table if not exists "vulnerability_documents" ("tenant_id" text not null collate "C", "asset_id" text not null collate "C", "vulnerability_id" text not null collate "C", "doc" bytea not null, constraint "vulnerability_documents_pkey" primary key ("tenant_id", "asset_id", "vulnerability_id"))`,
    `alter table "vulnerabilities" add column "intel" text collate "C"`,
    splitDocuments,
    `alter table "vulnerabilities" drop column "doc"`,
    `grant select on vulnerability_documents to secinv_api`,
    `alter table vulnerability_documents enable row level security`,
    `alter table vulnerability_documents force row level security`,
    `create policy tenant_isolation on vulnerability_documents to secinv_api using (tenant_id = current_setting('secinv.tenant_id', true))`,
    `create policy owner_access on vulnerability_documents to current_user using (true) with check (true)`,
  ],
};
