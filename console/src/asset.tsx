// One asset: its fields, tags, raw data, its findings (numbered pages, the page in the address), the risks on it and
// its history from the change log; a link to its SBOM.
import { useState } from 'preact/hooks';
import type { AssetWithRawData, Client } from '../../src/client/index.js';
import { useApi, useSession } from './data.js';
import { ErrorNotice } from './errors.js';
import { count, RISK_SEVERITIES, Severity, When, yesNo } from './format.js';
import { PageTitle, Pager } from './list.js';
import { href, Link, type Place } from './router.js';
import { AssetHistory } from './history.js';
import { FindingsTable } from './vulnerabilities.js';

/** The fields shown in the summary, in this order; the rest are in the raw record below. */
const FIELDS: readonly (readonly [keyof AssetWithRawData, string])[] = [
  ['provider', 'Provider'],
  ['type', 'Type'],
  ['service', 'Service'],
  ['region', 'Region'],
  ['resourceId', 'Resource id'],
  ['fullResourceName', 'Full resource name'],
  ['providerAccountId', 'Account'],
  ['operationalState', 'Operational state'],
  ['riskScore', 'Risk score'],
  ['vulnerabilityScore', 'Vulnerability score'],
  ['isPubliclyExposed', 'Publicly exposed'],
  ['isVulnerable', 'Vulnerable'],
  ['hasKev', 'Known exploited vulnerability'],
  ['hasExploit', 'Public exploit'],
  ['isExploitable', 'Exploitable'],
  ['isInVpc', 'In a VPC'],
  ['hasAdminPrivileges', 'Admin privileges'],
  ['hasOverlyPermissivePrivileges', 'Overly permissive privileges'],
  ['platform', 'Platform'],
  ['imageId', 'Image'],
  ['firstObservedAt', 'First observed'],
  ['lastObservedAt', 'Last observed'],
  ['lastScannedAt', 'Last scanned'],
  ['integrationId', 'Integration'],
];

function value(asset: AssetWithRawData, field: keyof AssetWithRawData) {
  const v = asset[field];
  if (typeof v === 'boolean') return yesNo(v);
  if (typeof v === 'string' && /At$/.test(field)) return <When at={v} />;
  if (v === null || v === undefined || v === '') return <span class="muted">—</span>;
  return typeof v === 'object' ? JSON.stringify(v) : String(v);
}

function SbomLink(props: { id: string }) {
  const { client } = useSession();
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  return (
    <div class="exports">
      <button
        type="button"
        disabled={busy}
        onClick={() => {
          setBusy(true);
          setError(undefined);
          client.assets
            .sbom(props.id)
            .then((link) => location.assign(link.data.url))
            .catch(setError)
            .finally(() => setBusy(false));
        }}
      >
        Download SBOM (CycloneDX)
      </button>
      {error !== undefined && <ErrorNotice error={error} />}
    </div>
  );
}

const loadRisks = (client: Client, id: string) =>
  client.risks.list({ primaryAssetIds: id, perPage: 20, sortBy: 'score', lifecycleStates: 'OPEN' });

function AssetRisks(props: { id: string }) {
  const { data, error, retry } = useApi((client) => loadRisks(client, props.id), props.id);
  if (error !== undefined) return <ErrorNotice error={error} retry={retry} />;
  if (!data) return <p class="muted">Loading risks…</p>;
  return (
    <>
      <p>
        {count(data.meta.total)} open risks.{' '}
        {data.meta.total > data.data.length && (
          <Link to={href('risks', { primaryAssetIds: props.id, lifecycleStates: 'OPEN' })}>All of them</Link>
        )}
      </p>
      <ul>
        {data.data.map((r) => (
          <li key={r.id}>
            <Severity level={r.severityLevel} /> {r.description} <span class="muted">(score {r.score})</span>
          </li>
        ))}
      </ul>
    </>
  );
}

function AssetFindings(props: { id: string; place: Place }) {
  const page = props.place.params.get('page') ?? '1';
  const { data, error, retry } = useApi(
    (client) => client.vulnerabilities.list({ assetIds: props.id, page: Number(page), perPage: 25 }),
    `${props.id}|${page}`,
  );
  if (error !== undefined) return <ErrorNotice error={error} retry={retry} />;
  if (!data || !('total' in data.meta)) return <p class="muted">Loading findings…</p>;
  return (
    <>
      <Pager path={props.place.path} params={props.place.params} meta={data.meta} what="findings" />
      <FindingsTable rows={data.data} withAsset={false} caption="Findings on this asset" />
      <p>
        <Link to={href('vulnerabilities', { assetIds: props.id })}>Filter these findings</Link>
      </p>
    </>
  );
}

export function AssetPage(props: { place: Place; id: string }) {
  const { id } = props;
  const { data, error, retry } = useApi((client) => client.assets.get(id, { include: 'rawData' }), id);
  const counts = data && [
    data.numberOfCriticalVulnerabilities,
    data.numberOfHighVulnerabilities,
    data.numberOfMediumVulnerabilities,
    data.numberOfLowVulnerabilities,
  ];
  const tags = data ? [...data.tags, ...data.resourceTags.map((t) => ({ Key: t.Key, Value: String(t.Value) }))] : [];
  return (
    <section>
      <PageTitle title={data?.name ?? 'Asset'}>{data?.name ?? 'Asset'}</PageTitle>
      <p class="muted break">{id}</p>
      {error !== undefined && <ErrorNotice error={error} retry={retry} />}
      {data && counts && (
        <>
          <p>
            Vulnerabilities:{' '}
            {RISK_SEVERITIES.map((level, i) => (
              <span key={level} class="count-chip">
                <Severity level={level} /> {count(counts[i] ?? 0)}
              </span>
            ))}
          </p>
          {data.resourceURL && (
            <p>
              <a href={data.resourceURL} rel="noreferrer noopener" target="_blank">
                Open in the provider console
              </a>
            </p>
          )}
          <SbomLink id={id} />
          <h2>Fields</h2>
          <dl class="fields">
            {FIELDS.map(([field, label]) => (
              <div key={field}>
                <dt>{label}</dt>
                <dd>{value(data, field)}</dd>
              </div>
            ))}
          </dl>
          <h2>Tags</h2>
          {tags.length === 0 ? (
            <p class="muted">No tags.</p>
          ) : (
            <table class="compact">
              <caption>Tags of the asset and of the provider resource</caption>
              <thead>
                <tr>
                  <th scope="col">Key</th>
                  <th scope="col">Value</th>
                </tr>
              </thead>
              <tbody>
                {tags.map((t, i) => (
                  <tr key={i}>
                    <td>{t.Key}</td>
                    <td>{t.Value}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
          <h2>Risks on this asset</h2>
          <AssetRisks id={id} />
          <h2>Findings</h2>
          <AssetFindings id={id} place={props.place} />
          <h2>History</h2>
          <AssetHistory id={id} />
          <h2>Raw data</h2>
          <details>
            <summary>The record as the scanner reported it</summary>
            <pre class="raw" tabIndex={0}>
              {JSON.stringify(data.rawData ?? {}, null, 2)}
            </pre>
          </details>
          <details>
            <summary>Every field of the asset (secrets, operating system, policy…) as the API returns it</summary>
            <pre class="raw" tabIndex={0}>
              {JSON.stringify({ ...data, rawData: undefined }, null, 2)}
            </pre>
          </details>
        </>
      )}
    </section>
  );
}
