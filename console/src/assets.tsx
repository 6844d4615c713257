// Assets: every filter of the list, its sorts, numbered pages; a row links to the asset's page.
import type { Asset, AssetListParams } from '../../src/client/index.js';
import { ASSETS_PATH } from '../../src/client/index.js';
import { useApi } from './data.js';
import { ErrorNotice } from './errors.js';
import { boolFilter, FilterForm, listFilter, listQuery, type FilterSpec } from './filters.js';
import { Flag, PROVIDERS, RISK_SEVERITIES } from './format.js';
import { ExportButtons, PageTitle, Pager } from './list.js';
import { assetHref, Link, type Place } from './router.js';
import { DataTable, type Column } from './table.js';

const spec: FilterSpec = {
  path: 'assets',
  main: [
    { kind: 'text', name: 'query', label: 'Name contains' },
    { kind: 'multi', name: 'providers', label: 'Provider', options: PROVIDERS },
    { kind: 'multi', name: 'severityLevels', label: 'Vulnerability severity', options: RISK_SEVERITIES },
    boolFilter('hasKev', 'Known exploited (KEV)'),
    boolFilter('isPubliclyExposed', 'Publicly exposed'),
    { kind: 'number', name: 'riskScoreGte', label: 'Risk score at least', hint: '0 to 10' },
  ],
  more: [
    listFilter('regions', 'Regions'),
    listFilter('services', 'Services', 'e.g. EC2 or AWS::EC2, comma-separated'),
    listFilter('resourceTypes', 'Resource types', 'e.g. AWS::EC2::Instance, comma-separated'),
    listFilter('environmentIds', 'Environments', 'production, non-production or environment ids'),
    { kind: 'multi', name: 'secretsLevels', label: 'Exposed secrets severity', options: RISK_SEVERITIES },
    { kind: 'multi', name: 'operationalStates', label: 'Operational state', options: ['active', 'inactive'] },
    boolFilter('isVulnerable', 'Vulnerable'),
    boolFilter('hasExploit', 'Public exploit'),
    boolFilter('isExploitable', 'Exploitable'),
    boolFilter('hasAdminPrivileges', 'Admin privileges'),
    boolFilter('hasOverlyPermissivePrivileges', 'Overly permissive privileges'),
    boolFilter('isSusceptibleToPrivilegeEscalation', 'Privilege escalation'),
    { kind: 'text', name: 'metadata', label: 'Metadata contains' },
    { kind: 'date', name: 'firstObservedAtStart', label: 'First observed from' },
    { kind: 'date', name: 'firstObservedAtEnd', label: 'First observed until' },
    listFilter('ids', 'Asset ids'),
    listFilter('integrationIds', 'Integration ids'),
    listFilter('executionIds', 'Execution ids'),
    listFilter('assetGroupIds', 'Asset group ids'),
  ],
  sort: {
    by: [
      ['riskScore', 'risk score'],
      ['vulnerabilityScore', 'vulnerability score'],
      ['numberOfCriticalVulnerabilities', 'critical vulnerabilities'],
      ['numberOfHighVulnerabilities', 'high vulnerabilities'],
      ['numberOfMediumVulnerabilities', 'medium vulnerabilities'],
      ['numberOfLowVulnerabilities', 'low vulnerabilities'],
      ['name', 'name'],
      ['provider', 'provider'],
      ['service', 'service'],
      ['resourceType', 'resource type'],
      ['region', 'region'],
      ['firstObservedAt', 'first observed'],
      ['lastObservedAt', 'last observed'],
      ['id', 'id'],
      ['integrationId', 'integration'],
      ['executionId', 'execution'],
    ],
    orders: ['ASC', 'DESC'],
  },
  perPage: [50, 25, 100, 500],
};

export const assetColumns: Column<Asset>[] = [
  { label: 'Name', cell: (a) => <Link to={assetHref(a.id)}>{a.name}</Link>, sort: 'name' },
  { label: 'Provider', cell: (a) => a.provider, sort: 'provider' },
  { label: 'Type', cell: (a) => a.resourceType, sort: 'resourceType' },
  { label: 'Region', cell: (a) => a.region, sort: 'region' },
  { label: 'Risk score', cell: (a) => a.riskScore, sort: 'riskScore', numeric: true },
  {
    label: 'Critical',
    cell: (a) => a.numberOfCriticalVulnerabilities,
    sort: 'numberOfCriticalVulnerabilities',
    numeric: true,
  },
  { label: 'High', cell: (a) => a.numberOfHighVulnerabilities, sort: 'numberOfHighVulnerabilities', numeric: true },
  {
    label: 'Medium',
    cell: (a) => a.numberOfMediumVulnerabilities,
    sort: 'numberOfMediumVulnerabilities',
    numeric: true,
  },
  { label: 'Low', cell: (a) => a.numberOfLowVulnerabilities, sort: 'numberOfLowVulnerabilities', numeric: true },
  {
    label: 'Flags',
    cell: (a) => (
      <>
        <Flag on={a.hasKev} label="KEV" title="a known exploited vulnerability (CISA KEV)" />
        <Flag on={a.hasExploit} label="exploit" title="a public exploit exists" />
        <Flag on={a.isPubliclyExposed} label="public" title="publicly exposed" />
      </>
    ),
  },
];

export function Assets(props: { place: Place }) {
  const { params } = props.place;
  const query = listQuery(params);
  const request = { perPage: 50, ...query } as AssetListParams;
  const search = new URLSearchParams(query).toString();
  const { data, error, loading, retry } = useApi((client) => client.assets.list(request), search);
  return (
    <section aria-busy={loading}>
      <PageTitle title="Assets">Assets</PageTitle>
      <FilterForm spec={spec} params={params} />
      <ExportButtons apiPath={ASSETS_PATH} query={listQuery(params, ['page', 'perPage'])} what="assets" />
      {error !== undefined && <ErrorNotice error={error} retry={retry} />}
      {data && (
        <>
          <Pager path="assets" params={params} meta={data.meta} what="assets" />
          <DataTable
            caption="Assets"
            columns={assetColumns}
            rows={data.data}
            rowKey={(a) => a.id}
            sort={{ path: 'assets', params, orders: ['ASC', 'DESC'] }}
          />
          <Pager path="assets" params={params} meta={data.meta} what="assets" position="below the table" />
        </>
      )}
    </section>
  );
}
