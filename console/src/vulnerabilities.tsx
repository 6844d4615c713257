// Vulnerability findings: the list's filters (package, KEV, exploit, exemptions among them), sort, numbered pages; a
// finding's packages, exploits, exemptions and weaknesses under its row. The asset page lists its findings with the
// same table.
import type { Vulnerability, VulnerabilityListParams } from '../../src/client/index.js';
import { VULNERABILITIES_PATH } from '../../src/client/index.js';
import { useApi } from './data.js';
import { ErrorNotice } from './errors.js';
import { boolFilter, FilterForm, listFilter, listQuery, type FilterSpec } from './filters.js';
import { FINDING_SEVERITIES, Flag, Items, PROVIDERS, Severity, When } from './format.js';
import { ExportButtons, PageTitle, Pager } from './list.js';
import { assetHref, Link, type Place } from './router.js';
import { DataTable, useOpenRows, type Column } from './table.js';

const spec: FilterSpec = {
  path: 'vulnerabilities',
  main: [
    { kind: 'multi', name: 'severityLevels', label: 'Severity', options: FINDING_SEVERITIES },
    { kind: 'text', name: 'packageName', label: 'Package name' },
    boolFilter('hasKev', 'Known exploited (KEV)'),
    boolFilter('hasExploit', 'Public exploit'),
    boolFilter('hasVendorFix', 'Vendor fix available'),
    boolFilter('isExempted', 'Exempted (show exempted findings)'),
    boolFilter('isOverdue', 'Overdue (past the due date)'),
  ],
  more: [
    listFilter('vulnerabilityIds', 'Vulnerability ids', 'e.g. CVE-2024-3094, comma-separated (at most 100)'),
    listFilter('assetIds', 'Asset ids', 'comma-separated (at most 10)'),
    { kind: 'multi', name: 'providers', label: 'Provider', options: PROVIDERS },
    listFilter('regions', 'Regions'),
    listFilter('environmentIds', 'Environments', 'production, non-production or environment ids'),
    boolFilter('isExploitable', 'Exploitable'),
    { kind: 'text', name: 'targetName', label: 'Target name' },
    { kind: 'text', name: 'targetType', label: 'Target type' },
    listFilter('targetClass', 'Target class', 'e.g. os-pkgs, lang-pkgs'),
    { kind: 'date', name: 'firstObservedAtStart', label: 'First observed from' },
    { kind: 'date', name: 'firstObservedAtEnd', label: 'First observed until' },
    { kind: 'date', name: 'dueAtEnd', label: 'Due by' },
    listFilter('integrationIds', 'Integration ids', 'comma-separated (at most 10)'),
    listFilter('executionIds', 'Execution ids', 'comma-separated (at most 10)'),
    listFilter('assetGroupIds', 'Asset group ids'),
  ],
  sort: {
    by: [
      ['severityLevelValue', 'severity'],
      ['hasKev', 'known exploited'],
      ['hasExploit', 'public exploit'],
      ['firstObservedAt', 'first observed'],
      ['lastObservedAt', 'last observed'],
    ],
    orders: ['ASC', 'DESC'],
  },
  perPage: [50, 25, 100, 500],
};

const findingId = (v: Vulnerability, index: number) => `finding-${index}-${v.vulnerabilityId}`;

function FindingDetails(props: { finding: Vulnerability; id: string }) {
  const v = props.finding;
  return (
    <div class="details" id={props.id}>
      <p>{v.description}</p>
      <p class="muted">
        Severity from {v.severitySource || 'unknown source'}
        {v.publishedDate ? (
          <>
            {' '}
            · published <When at={v.publishedDate} />
          </>
        ) : null}
        {v.primaryUrl ? (
          <>
            {' · '}
            <a href={v.primaryUrl} rel="noreferrer noopener" target="_blank">
              reference
            </a>
          </>
        ) : null}
      </p>
      <Items
        title="Packages"
        items={v.packages}
        empty="None listed."
        item={(p) => (
          <>
            {p.packageName} {p.installedVersion}
            {p.fixedVersion ? ` → fixed in ${p.fixedVersion}` : ' (no fix)'}
            {p.targetName ? <span class="muted"> in {p.targetName}</span> : null}
          </>
        )}
      />
      {v.knownExploit?.cveID ? (
        <>
          <h3>Known exploited (CISA KEV)</h3>
          <p>
            {v.knownExploit.vulnerabilityName}. Required action: {v.knownExploit.requiredAction} (due{' '}
            {v.knownExploit.dueDate})
          </p>
        </>
      ) : null}
      <Items
        title="Public exploits"
        items={v.exploits}
        item={(e) => (
          <>
            {e.title} <span class="muted">({e.source})</span>
          </>
        )}
      />
      <Items
        title="Exemptions"
        items={v.exemptions}
        item={(e) => (
          <>
            {e.exemption.name} <span class="muted">({e.exemption.reason})</span>
          </>
        )}
      />
      {v.cwes.length > 0 && <p class="muted">Weaknesses: {v.cwes.map((c) => c.cweId || c.id).join(', ')}</p>}
    </div>
  );
}

/** Findings with their details under a row; `withAsset` adds the asset column (not on an asset's own page). */
export function FindingsTable(props: {
  rows: readonly Vulnerability[];
  withAsset: boolean;
  caption: string;
  sort?: { path: string; params: URLSearchParams };
}) {
  const [open, toggle] = useOpenRows();
  const keyOf = new Map(props.rows.map((v, i) => [v, findingId(v, i)]));
  const columns: Column<Vulnerability>[] = [
    { label: 'Severity', cell: (v) => <Severity level={v.severityLevel} />, sort: 'severityLevelValue' },
    {
      label: 'Vulnerability',
      cell: (v) => (
        <button
          type="button"
          class="linkish"
          aria-expanded={open.has(keyOf.get(v)!)}
          aria-controls={keyOf.get(v)}
          onClick={() => toggle(keyOf.get(v)!)}
        >
          <strong>{v.vulnerabilityId}</strong> {v.title}
        </button>
      ),
    },
    ...(props.withAsset
      ? [
          {
            label: 'Asset',
            cell: (v: Vulnerability) => <Link to={assetHref(v.assetId)}>{v.assetId.split(':').pop()}</Link>,
          },
        ]
      : []),
    {
      label: 'Package',
      cell: (v) => {
        const p = v.packages[0];
        if (!p) return <span class="muted">—</span>;
        return `${p.packageName} ${p.installedVersion}${p.fixedVersion ? ` → ${p.fixedVersion}` : ''}`;
      },
    },
    {
      label: 'Flags',
      cell: (v) => (
        <>
          <Flag on={v.hasKev} label="KEV" title="known exploited (CISA KEV)" />
          <Flag on={v.hasExploit} label="exploit" title="a public exploit exists" />
          <Flag on={v.exemptions.length > 0} label="exempted" title="an exemption covers it" />
          <Flag on={v.isOverdue} label="overdue" title="open past its due date" />
        </>
      ),
    },
    { label: 'Due', cell: (v) => <When at={v.dueAt} /> },
    { label: 'Last observed', cell: (v) => <When at={v.lastObservedAt} />, sort: 'lastObservedAt' },
  ];
  return (
    <DataTable
      caption={props.caption}
      columns={columns}
      rows={props.rows}
      rowKey={(v) => keyOf.get(v)!}
      sort={props.sort && { ...props.sort, orders: ['ASC', 'DESC'] }}
      details={(v) => (open.has(keyOf.get(v)!) ? <FindingDetails finding={v} id={keyOf.get(v)!} /> : null)}
    />
  );
}

export function Vulnerabilities(props: { place: Place }) {
  const { params } = props.place;
  const query = listQuery(params);
  const request = { perPage: 50, ...query } as VulnerabilityListParams;
  const search = new URLSearchParams(query).toString();
  const { data, error, loading, retry } = useApi((client) => client.vulnerabilities.list(request), search);
  const meta = data?.meta;
  return (
    <section aria-busy={loading}>
      <PageTitle title="Vulnerabilities">Vulnerabilities</PageTitle>
      <FilterForm spec={spec} params={params} />
      <ExportButtons apiPath={VULNERABILITIES_PATH} query={listQuery(params, ['page', 'perPage'])} what="findings" />
      {error !== undefined && <ErrorNotice error={error} retry={retry} />}
      {data && meta && 'total' in meta && (
        <>
          <Pager path="vulnerabilities" params={params} meta={meta} what="findings" />
          <FindingsTable
            rows={data.data}
            withAsset
            caption="Vulnerability findings; choose one to see its packages, exploits and exemptions"
            sort={{ path: 'vulnerabilities', params }}
          />
          <Pager path="vulnerabilities" params={params} meta={meta} what="findings" position="below the table" />
        </>
      )}
    </section>
  );
}
