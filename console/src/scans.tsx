// Scans: every report the tenant's inventory took in, uploaded over HTTP or run by `secinv ingest`, newest first, in
// cursor batches as the risks: its status, and what it changed or why it failed; a scan opens to its options, its
// bytes' digest, every problem and its gate.
import type { Scan, ScanListParams } from '../../src/client/index.js';
import { useApi } from './data.js';
import { ErrorNotice } from './errors.js';
import { FilterForm, listQuery, type FilterSpec } from './filters.js';
import { count, FINDING_SEVERITIES, Items, When } from './format.js';
import { BatchPager, PageTitle, useCursors } from './list.js';
import { assetHref, Link, type Place } from './router.js';
import { DataTable, useOpenRows, type Column } from './table.js';

const STATUSES = ['queued', 'running', 'succeeded', 'failed'] as const;
const FORMATS = ['trivy', 'trivy-k8s', 'trivy-operator', 'grype', 'cyclonedx', 'openvex', 'prowler-ocsf'] as const;

const spec: FilterSpec = {
  path: 'scans',
  main: [
    { kind: 'multi', name: 'statuses', label: 'Status', options: STATUSES },
    { kind: 'multi', name: 'formats', label: 'Format', options: FORMATS },
    { kind: 'date', name: 'submittedAtStart', label: 'Submitted from' },
    { kind: 'date', name: 'submittedAtEnd', label: 'Submitted until' },
  ],
  more: [],
  perPage: [25, 50, 100],
};

/** A status as a labelled badge (the word carries it; the colour only helps scanning). */
const Status = (props: { status: string }) => <span class={`badge status-${props.status}`}>{props.status}</span>;

/** A count of a succeeded scan's summary; a dash for a scan that has none. */
const summaryCount = (scan: Scan, value: (summary: NonNullable<Scan['summary']>) => number) =>
  scan.summary ? count(value(scan.summary)) : <span class="muted">—</span>;

const assetsOf = (summary: NonNullable<Scan['summary']>) =>
  summary.assets.created + summary.assets.updated + summary.assets.unchanged;

function FirstProblem(props: { scan: Scan }) {
  const [first, ...rest] = props.scan.problems;
  if (!first) return null;
  return (
    <>
      {first.message}
      {rest.length > 0 && <span class="muted"> (and {count(rest.length)} more)</span>}
    </>
  );
}

function ScanDetails(props: { scan: Scan }) {
  const { scan } = props;
  const { summary, gate } = scan;
  const options = Object.entries(scan.options).map(([name, value]) => `${name}=${String(value)}`);
  return (
    <div class="details" id={`scan-${scan.id}`}>
      <p class="muted">
        Scan {scan.id} · {scan.keyId === null ? 'by secinv ingest' : `uploaded with key ${scan.keyId}`} ·{' '}
        {count(scan.sizeBytes)} bytes · SHA-256 <code>{scan.sha256}</code>
      </p>
      <p class="muted">
        Options: {options.length > 0 ? options.join(', ') : 'none'} · started <When at={scan.startedAt} />
      </p>
      {summary && (
        <p>
          Assets {count(summary.assets.created)} created, {count(summary.assets.updated)} updated,{' '}
          {count(summary.assets.unchanged)} unchanged · findings {count(summary.findings.added)} added,{' '}
          {count(summary.findings.updated)} updated, {count(summary.findings.unchanged)} unchanged,{' '}
          {count(summary.findings.resolved)} resolved · exemptions {count(summary.exemptions.added)} added,{' '}
          {count(summary.exemptions.removed)} removed · failed checks {count(summary.checks.failed)}, passed{' '}
          {count(summary.checks.passed)} · risks {count(summary.risks.new)} new, {count(summary.risks.changed)} changed,{' '}
          {count(summary.risks.gone)} gone
        </p>
      )}
      {gate && (
        <p>
          Open after it:{' '}
          {FINDING_SEVERITIES.filter((s) => gate.open[s] > 0)
            .map((s) => `${count(gate.open[s])} ${s.toLowerCase()}`)
            .join(', ') || 'none'}{' '}
          · {count(gate.kev)} known exploited · {count(gate.exploit)} with a public exploit
        </p>
      )}
      {summary && (
        <Items
          title="Assets"
          items={summary.assetIds}
          empty="None."
          item={(id) => <Link to={assetHref(id)}>{id}</Link>}
        />
      )}
      <Items
        title="Problems"
        items={scan.problems}
        item={(p) => (
          <>
            {p.message}
            {(p.file ?? p.path ?? p.line) !== undefined && (
              <span class="muted">
                {' '}
                ({[p.file, p.path, p.line === undefined ? undefined : `line ${p.line}`].filter(Boolean).join(', ')})
              </span>
            )}
          </>
        )}
      />
    </div>
  );
}

export function Scans(props: { place: Place }) {
  const { params } = props.place;
  const query = listQuery(params);
  const search = new URLSearchParams(query).toString();
  const batches = useCursors(search);
  const { cursor } = batches;
  const request = { perPage: 25, ...query, ...(cursor ? { cursor } : {}) } as ScanListParams;
  const { data, error, loading, retry } = useApi((client) => client.scans.list(request), `${search}|${cursor ?? ''}`);
  const [open, toggle] = useOpenRows();

  const columns: Column<Scan>[] = [
    { label: 'Status', cell: (s) => <Status status={s.status} /> },
    {
      label: 'Name',
      cell: (s) => (
        <button
          type="button"
          class="linkish"
          aria-expanded={open.has(s.id)}
          aria-controls={`scan-${s.id}`}
          onClick={() => toggle(s.id)}
        >
          {s.name ?? <span class="muted">unnamed</span>}
        </button>
      ),
    },
    { label: 'Format', cell: (s) => s.format ?? <span class="muted">—</span> },
    { label: 'Submitted', cell: (s) => <When at={s.submittedAt} /> },
    { label: 'Finished', cell: (s) => <When at={s.finishedAt} /> },
    { label: 'Findings added', cell: (s) => summaryCount(s, (m) => m.findings.added), numeric: true },
    { label: 'Findings resolved', cell: (s) => summaryCount(s, (m) => m.findings.resolved), numeric: true },
    { label: 'Assets', cell: (s) => summaryCount(s, assetsOf), numeric: true },
    { label: 'Problem', cell: (s) => <FirstProblem scan={s} /> },
  ];

  const first = batches.before * Number(request.perPage);
  return (
    <section aria-busy={loading}>
      <PageTitle title="Scans">Scans</PageTitle>
      <p class="muted">
        Reports uploaded over HTTP (<code>POST /v1/tenant/scans</code>, <code>secinv push</code>) or ingested with{' '}
        <code>secinv ingest</code>, newest first.
      </p>
      <FilterForm spec={spec} params={params} />
      {error !== undefined && <ErrorNotice error={error} retry={retry} />}
      {data && (
        <>
          <p aria-live="polite" class="summary" data-shown={data.data.length}>
            {data.data.length === 0
              ? 'No scan matches.'
              : `Showing scans ${count(first + 1)}–${count(first + data.data.length)}, newest first`}
          </p>
          <DataTable
            caption="Scans, newest first; choose a scan's name to see its options, problems and gate"
            columns={columns}
            rows={data.data}
            rowKey={(s) => s.id}
            details={(s) => (open.has(s.id) ? <ScanDetails scan={s} /> : null)}
          />
          <BatchPager batches={batches} next={data.meta.cursor} what="scans" />
        </>
      )}
    </section>
  );
}
