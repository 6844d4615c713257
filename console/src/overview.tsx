// The overview: open risks and findings by severity, assets, assets with a known exploited vulnerability, publicly
// exposed assets. Every figure is the `meta.total` of a one-record page of a list (the API has no other count), asked
// in parallel; each links to the list it counts.
import type { Client } from '../../src/client/index.js';
import { useApi } from './data.js';
import { ErrorNotice } from './errors.js';
import { count, FINDING_SEVERITIES, RISK_SEVERITIES } from './format.js';
import { PageTitle } from './list.js';
import { href, Link } from './router.js';

interface Counts {
  risks: Record<string, number>;
  findings: Record<string, number>;
  assets: number;
  kev: number;
  exposed: number;
}

/** Lists answer a total unless asked not to (a cursor, `includeTotal=false`), which the overview never does. */
const totalOf = (meta: object): number => ('total' in meta && typeof meta.total === 'number' ? meta.total : 0);

async function loadCounts(client: Client): Promise<Counts> {
  const risk = (level: (typeof RISK_SEVERITIES)[number]) =>
    client.risks
      .list({ severityLevels: level, lifecycleStates: 'OPEN', perPage: 1, fields: ['id'] })
      .then((p) => totalOf(p.meta));
  const finding = (level: (typeof FINDING_SEVERITIES)[number]) =>
    client.vulnerabilities.list({ severityLevels: level, perPage: 1 }).then((p) => totalOf(p.meta));
  const assets = (query: { hasKev?: boolean; isPubliclyExposed?: boolean }) =>
    client.assets.list({ ...query, perPage: 1 }).then((p) => p.meta.total);
  const [risks, findings, counts] = await Promise.all([
    Promise.all(RISK_SEVERITIES.map(risk)),
    Promise.all(FINDING_SEVERITIES.map(finding)),
    Promise.all([assets({}), assets({ hasKev: true }), assets({ isPubliclyExposed: true })]),
  ]);
  return {
    risks: Object.fromEntries(RISK_SEVERITIES.map((level, i) => [level, risks[i] ?? 0])),
    findings: Object.fromEntries(FINDING_SEVERITIES.map((level, i) => [level, findings[i] ?? 0])),
    assets: counts[0],
    kev: counts[1],
    exposed: counts[2],
  };
}

/** Horizontal bars, one per severity, scaled to the largest; the figures are in the table beside it too. */
function Bars(props: { title: string; values: Record<string, number>; id: string }) {
  const entries = Object.entries(props.values);
  const largest = Math.max(1, ...entries.map(([, n]) => n));
  const rowHeight = 26;
  const width = 320;
  const labelWidth = 110;
  const height = entries.length * rowHeight;
  return (
    <svg
      class="chart"
      viewBox={`0 0 ${width} ${height}`}
      width={width}
      height={height}
      role="img"
      aria-labelledby={`${props.id}-title`}
    >
      <title id={`${props.id}-title`}>
        {props.title}: {entries.map(([level, n]) => `${level} ${n}`).join(', ')}
      </title>
      {entries.map(([level, n], i) => {
        const length = Math.round(((width - labelWidth - 60) * n) / largest);
        return (
          <g key={level} transform={`translate(0 ${i * rowHeight})`}>
            <text x="0" y="17" class="chart-label">
              {level}
            </text>
            <rect
              x={labelWidth}
              y="4"
              width={Math.max(length, n > 0 ? 2 : 0)}
              height="18"
              class={`bar sev-${level.toLowerCase()}`}
            />
            <text x={labelWidth + length + 6} y="17" class="chart-label">
              {count(n)}
            </text>
          </g>
        );
      })}
    </svg>
  );
}

function SeverityTable(props: { caption: string; values: Record<string, number>; link(level: string): string }) {
  return (
    <table class="compact">
      <caption>{props.caption}</caption>
      <thead>
        <tr>
          <th scope="col">Severity</th>
          <th scope="col" class="num">
            Count
          </th>
        </tr>
      </thead>
      <tbody>
        {Object.entries(props.values).map(([level, n]) => (
          <tr key={level}>
            <th scope="row">{level}</th>
            <td class="num">
              <Link to={props.link(level)}>{count(n)}</Link>
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export function Overview() {
  const { data, error, loading, retry } = useApi(loadCounts, 'overview');
  return (
    <section aria-busy={loading}>
      <PageTitle title="Overview">Overview</PageTitle>
      {error !== undefined && <ErrorNotice error={error} retry={retry} />}
      {data === undefined && error === undefined && <p class="muted">Counting…</p>}
      {data && (
        <div class="overview" data-ready="true">
          <ul class="cards">
            <li>
              <Link to={href('assets')}>
                <span class="card-figure">{count(data.assets)}</span> assets
              </Link>
            </li>
            <li>
              <Link to={href('assets', { hasKev: 'true' })}>
                <span class="card-figure">{count(data.kev)}</span> assets with a known exploited vulnerability (KEV)
              </Link>
            </li>
            <li>
              <Link to={href('assets', { isPubliclyExposed: 'true' })}>
                <span class="card-figure">{count(data.exposed)}</span> publicly exposed assets
              </Link>
            </li>
          </ul>
          <div class="panels">
            <div class="panel">
              <h2>Open risks by severity</h2>
              <Bars id="risk-chart" title="Open risks by severity" values={data.risks} />
              <SeverityTable
                caption="Open risks"
                values={data.risks}
                link={(level) => href('risks', { severityLevels: level, lifecycleStates: 'OPEN' })}
              />
            </div>
            <div class="panel">
              <h2>Findings by severity</h2>
              <Bars id="finding-chart" title="Findings by severity" values={data.findings} />
              <SeverityTable
                caption="Findings (not exempted)"
                values={data.findings}
                link={(level) => href('vulnerabilities', { severityLevels: level })}
              />
            </div>
          </div>
        </div>
      )}
    </section>
  );
}
