// A finding's stored document lives apart from its narrow row (docs/DESIGN.md §44): the rows every filter, sort, count
// and feed load reads stay small, and the few readers of documents (a page's rows, the risk rules) join them by key.
import type { SelectQueryBuilder } from 'kysely';
import type { Database } from './tables.js';

/** Findings with their stored documents as `d`, joined by key: one primary-key probe a finding. */
export const withDocuments = <O>(findings: SelectQueryBuilder<Database, 'vulnerabilities', O>) =>
  findings.innerJoin('vulnerability_documents as d', (join) =>
    join
      .onRef('d.tenant_id', '=', 'vulnerabilities.tenant_id')
      .onRef('d.asset_id', '=', 'vulnerabilities.asset_id')
      .onRef('d.vulnerability_id', '=', 'vulnerabilities.vulnerability_id'),
  );
