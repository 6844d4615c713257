// Risks: the filters of the list, sort, cursor batches with their primary asset embedded, and a risk's factors and
// resolutions under its row.
import type { RiskItem, RiskListParams } from '../../src/client/index.js';
import { RISKS_PATH } from '../../src/client/index.js';
import { useApi } from './data.js';
import { ErrorNotice } from './errors.js';
import { FilterForm, listQuery, type FilterSpec } from './filters.js';
import { count, Items, RISK_SEVERITIES, Severity, When } from './format.js';
import { BatchPager, ExportButtons, PageTitle, useCursors } from './list.js';
import { assetHref, Link, type Place } from './router.js';
import { DataTable, useOpenRows, type Column } from './table.js';

const spec: FilterSpec = {
  path: 'risks',
  main: [
    { kind: 'multi', name: 'severityLevels', label: 'Severity', options: RISK_SEVERITIES },
    {
      kind: 'multi',
      name: 'lifecycleStates',
      label: 'State',
      options: ['OPEN', 'DISMISSED_ACCEPTED', 'DISMISSED_NOT_A_RISK'],
    },
    { kind: 'text', name: 'resourceTypes', label: 'Resource types', hint: 'comma-separated, e.g. AWS::EC2::Instance' },
    { kind: 'date', name: 'discoveredAtStart', label: 'Discovered from' },
    { kind: 'date', name: 'discoveredAtEnd', label: 'Discovered until' },
  ],
  more: [
    { kind: 'text', name: 'riskTypeIds', label: 'Risk type ids', hint: 'comma-separated' },
    { kind: 'text', name: 'primaryAssetIds', label: 'Primary asset ids', hint: 'comma-separated' },
    { kind: 'text', name: 'integrationIds', label: 'Integration ids', hint: 'comma-separated' },
    {
      kind: 'text',
      name: 'environmentIds',
      label: 'Environments',
      hint: 'production, non-production or environment ids',
    },
    { kind: 'text', name: 'ids', label: 'Risk ids', hint: 'comma-separated' },
  ],
  sort: {
    by: [
      ['discoveredAt', 'discovered'],
      ['score', 'score'],
    ],
    orders: ['asc', 'desc'],
  },
  perPage: [50, 25, 100],
};

type Risk = RiskItem;

function RiskDetails(props: { risk: Risk }) {
  const { risk } = props;
  return (
    <div class="details" id={`risk-${risk.id}`}>
      <p>{risk.description}</p>
      <p class="muted">
        Risk {risk.id} · type {risk.riskTypeId} · likelihood {risk.likelihood} · impact {risk.impact}
      </p>
      <Items
        title="Factors"
        items={risk.factors}
        empty="None listed."
        item={(f) => (
          <>
            <strong>{f.title}</strong> ({f.value}, {f.verificationState}){f.description ? ` — ${f.description}` : ''}
          </>
        )}
      />
      <Items
        title="Resolutions"
        items={risk.resolutions}
        empty="None listed."
        item={(r) => (
          <>
            {r.title} <span class="muted">({r.type})</span>
          </>
        )}
      />
    </div>
  );
}

export function Risks(props: { place: Place }) {
  const { params } = props.place;
  const query = listQuery(params);
  const search = new URLSearchParams(query).toString();
  const batches = useCursors(search);
  const { cursor } = batches;
  const request = { perPage: 50, ...query, include: 'primaryAsset', ...(cursor ? { cursor } : {}) } as RiskListParams;
  const { data, error, loading, retry } = useApi((client) => client.risks.list(request), `${search}|${cursor ?? ''}`);
  const [open, toggle] = useOpenRows();

  const columns: Column<Risk>[] = [
    { label: 'Severity', cell: (r) => <Severity level={r.severityLevel} /> },
    { label: 'Score', cell: (r) => r.score, sort: 'score', numeric: true },
    {
      label: 'Risk',
      cell: (r) => (
        <button
          type="button"
          class="linkish"
          aria-expanded={open.has(r.id)}
          aria-controls={`risk-${r.id}`}
          onClick={() => toggle(r.id)}
        >
          {r.description}
        </button>
      ),
    },
    {
      label: 'Primary asset',
      cell: (r) =>
        r.primaryAsset ? (
          <Link to={assetHref(r.primaryAsset.id)}>{r.primaryAsset.name}</Link>
        ) : (
          <span class="muted">{r.meta?.assetName || r.primaryAssetId}</span>
        ),
    },
    { label: 'Resource type', cell: (r) => r.meta?.resourceType },
    { label: 'State', cell: (r) => r.lifecycleState },
    { label: 'Discovered', cell: (r) => <When at={r.discoveredAt} />, sort: 'discoveredAt' },
  ];

  const perPage = Number(request.perPage);
  const first = batches.before * perPage;
  return (
    <section aria-busy={loading}>
      <PageTitle title="Risks">Risks</PageTitle>
      <FilterForm spec={spec} params={params} />
      <ExportButtons
        apiPath={RISKS_PATH}
        query={{ ...listQuery(params, ['perPage']), include: 'primaryAsset' }}
        what="risks"
      />
      {error !== undefined && <ErrorNotice error={error} retry={retry} />}
      {data && (
        <>
          <p aria-live="polite" class="summary">
            <strong data-total={data.meta.total}>{count(data.meta.total)}</strong> risks match
            {data.data.length > 0 && ` · showing ${count(first + 1)}–${count(first + data.data.length)}`}
          </p>
          <DataTable
            caption="Risks, with their primary asset; choose a risk to see its factors and resolutions"
            columns={columns}
            rows={data.data}
            rowKey={(r) => r.id}
            sort={{ path: 'risks', params, orders: ['asc', 'desc'], defaultBy: 'discoveredAt', defaultOrder: 'desc' }}
            details={(r) => (open.has(r.id) ? <RiskDetails risk={r} /> : null)}
          />
          <BatchPager batches={batches} next={data.meta.cursor} what="risks" />
        </>
      )}
    </section>
  );
}
