// The overview: open risks and findings by severity, assets, assets with a known exploited vulnerability, publicly
// exposed assets, overdue findings, and the open findings of the last 90 days. Every figure is the `meta.total` of a
// one-record page of a list, asked in parallel, and links to the list it counts; the trend is the findings metrics'.
import type { Client, FindingMetrics } from '../../src/client/index.js';
import { useEffect, useState } from 'preact/hooks';
import { useApi } from './data.js';
import { ErrorNotice } from './errors.js';
import { count, FINDING_SEVERITIES, RISK_SEVERITIES } from './format.js';
import { PageTitle } from './list.js';
import { href, Link } from './router.js';
import { Trend } from './trend.js';

/** Lists answer a total unless asked not to (a cursor, `includeTotal=false`), which the overview never does. */
const totalOf = (meta: object): number => ('total' in meta && typeof meta.total === 'number' ? meta.total : 0);

/** Each figure of the overview by name (`risk:HIGH`, `finding:LOW`, `assets`, `kev`, `exposed`) and its request. */
const FIGURES: readonly (readonly [string, (client: Client) => Promise<number>])[] = [
  ...RISK_SEVERITIES.map(
    (level) =>
      [
        `risk:${level}`,
        (client: Client) =>
          client.risks
            .list({ severityLevels: level, lifecycleStates: 'OPEN', perPage: 1, fields: ['id'] })
            .then((p) => totalOf(p.meta)),
      ] as const,
  ),
  ...FINDING_SEVERITIES.map(
    (level) =>
      [
        `finding:${level}`,
        (client: Client) =>
          client.vulnerabilities.list({ severityLevels: level, perPage: 1 }).then((p) => totalOf(p.meta)),
      ] as const,
  ),
  ['assets', (client) => client.assets.list({ perPage: 1 }).then((p) => p.meta.total)],
  ['kev', (client) => client.assets.list({ hasKev: true, perPage: 1 }).then((p) => p.meta.total)],
  ['exposed', (client) => client.assets.list({ isPubliclyExposed: true, perPage: 1 }).then((p) => p.meta.total)],
  ['overdue', (client) => client.vulnerabilities.list({ isOverdue: true, perPage: 1 }).then((p) => totalOf(p.meta))],
];

type Figures = Readonly<Record<string, number>>;

/** The figures of one group by level, once every one of them has arrived. */
function group(figures: Figures, prefix: string, levels: readonly string[]): Record<string, number> | undefined {
  const values = levels.map((level) => figures[`${prefix}:${level}`]);
  if (values.some((n) => n === undefined)) return undefined;
  return Object.fromEntries(levels.map((level, i) => [level, values[i] ?? 0]));
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

function SeverityTable(props: { caption: string; values: Record<string, number>; link: (level: string) => string }) {
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

function Card(props: { figure: number | undefined; to: string; children: string }) {
  return (
    <li>
      <Link to={props.to}>
        <span class="card-figure">{props.figure === undefined ? '…' : count(props.figure)}</span> {props.children}
      </Link>
    </li>
  );
}

function SeverityPanel(props: {
  title: string;
  caption: string;
  values?: Record<string, number>;
  link: (level: string) => string;
}) {
  const id = props.title.toLowerCase().replaceAll(' ', '-');
  return (
    <div class="panel">
      <h2>{props.title}</h2>
      {props.values ? (
        <>
          <Bars id={id} title={props.title} values={props.values} />
          <SeverityTable caption={props.caption} values={props.values} link={props.link} />
        </>
      ) : (
        <p class="muted">Counting…</p>
      )}
    </div>
  );
}

/**
 * Each figure is drawn as soon as its count arrives (the first count of a filter on a large tenant takes longest);
 * `data-ready` marks the page once all have.
 */
export function Overview() {
  const [figures, setFigures] = useState<Figures>({});
  const [trend, setTrend] = useState<FindingMetrics>();
  const { data, error, loading, retry } = useApi(async (client) => {
    setFigures({});
    setTrend(undefined);
    await Promise.all([
      ...FIGURES.map(async ([name, load]) => {
        const n = await load(client);
        setFigures((previous) => ({ ...previous, [name]: n }));
      }),
      // The last 90 days by day: the endpoint's default range.
      client.metrics.findings().then(setTrend),
    ]);
    return true;
  }, 'overview');
  const shown = Object.keys(figures).length;
  useEffect(() => {
    // After the render that drew them (see the sign-in's mark in app.tsx).
    if (shown === 1) performance.mark('secinv:first-figure');
    if (shown === FIGURES.length && trend !== undefined) performance.mark('secinv:overview');
  }, [shown, trend]);
  return (
    <section aria-busy={loading}>
      <PageTitle title="Overview">Overview</PageTitle>
      {error !== undefined && <ErrorNotice error={error} retry={retry} />}
      <div class="overview" data-ready={data === true ? 'true' : undefined}>
        <ul class="cards">
          <Card figure={figures.assets} to={href('assets')}>
            assets
          </Card>
          <Card figure={figures.kev} to={href('assets', { hasKev: 'true' })}>
            assets with a known exploited vulnerability (KEV)
          </Card>
          <Card figure={figures.exposed} to={href('assets', { isPubliclyExposed: 'true' })}>
            publicly exposed assets
          </Card>
          <Card figure={figures.overdue} to={href('vulnerabilities', { isOverdue: 'true' })}>
            overdue findings (past their due date)
          </Card>
        </ul>
        <div class="panel">
          <h2>Open findings by severity, last 90 days</h2>
          {trend ? <Trend metrics={trend} /> : <p class="muted">Counting…</p>}
        </div>
        <div class="panels">
          <SeverityPanel
            title="Open risks by severity"
            caption="Open risks"
            values={group(figures, 'risk', RISK_SEVERITIES)}
            link={(level) => href('risks', { severityLevels: level, lifecycleStates: 'OPEN' })}
          />
          <SeverityPanel
            title="Findings by severity"
            caption="Findings (not exempted)"
            values={group(figures, 'finding', FINDING_SEVERITIES)}
            link={(level) => href('vulnerabilities', { severityLevels: level })}
          />
        </div>
      </div>
    </section>
  );
}
