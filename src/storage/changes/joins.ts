// The join of a write's live findings (`x`) to their captures (`c`) and to the findings resolved before (`t`), by key,
// for the comparison and the rollup at settle. On PostgreSQL each is a lateral probe per finding: `change_captures` is
// filled and emptied inside each write, so its statistics always say it is empty, and a plain join became a join
// filter over every capture for each finding (4–5 s a statement for the 29,170 findings of an Exploit-DB load).
import { sql, type RawBuilder } from 'kysely';
import type { Dialect } from '../types.js';
import { keyProbe } from '../read/vulnerabilities/documents.js';

export function findingJoins(dialect: Dialect, tenantId: string): RawBuilder<unknown> {
  if (dialect === 'sqlite')
    return sql`left join change_captures as c on c.tenant_id = ${tenantId} and c.kind = 'finding'
        and c.asset_id = x.asset_id and c.item = x.vulnerability_id
      left join resolved_findings as t on t.tenant_id = ${tenantId} and t.asset_id = x.asset_id
        and t.vulnerability_id = x.vulnerability_id`;
  return sql`left join lateral (select c.state, c.severity_value, c.due_at, c.exempted from change_captures as c
        where c.tenant_id = ${tenantId} and c.kind = 'finding' and c.asset_id = x.asset_id
          and c.item = x.vulnerability_id ${keyProbe('c')}) as c on true
      left join lateral (select t.vulnerability_id from resolved_findings as t
        where t.tenant_id = ${tenantId} and t.asset_id = x.asset_id and t.vulnerability_id = x.vulnerability_id
        ${keyProbe('t')}) as t on true`;
}
