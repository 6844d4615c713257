// A finding's stored document lives apart from its narrow row (docs/DESIGN.md §44): the rows every filter, sort, count
// and feed load reads stay small, and the few readers of documents (a page's rows, the risk rules) fetch them by key.
import type { ExpressionBuilder, RawBuilder } from 'kysely';
import type { Database } from './tables.js';

/**
 * A finding's stored document, as a subquery of its row: one primary-key probe for each row the statement returns. A
 * join would leave the choice to the planner, and PostgreSQL without fresh statistics hashed the whole documents table
 * for each export batch (1,900 findings/s instead of 45,000).
 */
export const documentOf = <T>(
  eb: ExpressionBuilder<Database, 'vulnerabilities'>,
  read: (column: string) => RawBuilder<T>,
) =>
  eb
    .selectFrom('vulnerability_documents as d')
    .select(read('d.doc').as('doc'))
    .whereRef('d.tenant_id', '=', 'vulnerabilities.tenant_id')
    .whereRef('d.asset_id', '=', 'vulnerabilities.asset_id')
    .whereRef('d.vulnerability_id', '=', 'vulnerabilities.vulnerability_id')
    .$asScalar()
    .$notNull();
