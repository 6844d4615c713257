// The overview's trend: open findings by severity over the last 90 days, one line per severity, drawn as SVG by hand
// as the overview's bars are (docs/DESIGN.md §111). The lines differ by dash as well as by colour, the legend holds
// the latest values, and a table beside the chart holds them all in text.
import type { FindingMetrics } from '../../src/client/index.js';
import { count, RISK_SEVERITIES } from './format.js';

/** The severities drawn: the four a finding's due date comes from by default. */
const LEVELS = RISK_SEVERITIES;
type Level = (typeof LEVELS)[number];

const WIDTH = 640;
const HEIGHT = 220;
const LEFT = 56;
const RIGHT = 12;
const TOP = 12;
const BOTTOM = 26;

/** 1, 2 or 5 times a power of ten, at or above `n`: the top of the axis. */
function niceCeiling(n: number): number {
  if (n <= 0) return 1;
  const power = 10 ** Math.floor(Math.log10(n));
  return ([1, 2, 5, 10].find((step) => step * power >= n) ?? 10) * power;
}

/** `Sep 4` from `2026-09-04`, in UTC as the metrics' days are. */
const shortDay = (day: string): string =>
  new Date(`${day}T00:00:00Z`).toLocaleDateString('en-US', { month: 'short', day: 'numeric', timeZone: 'UTC' });

/** A swatch of a severity's line, for the legend. */
function Swatch(props: { level: Level }) {
  return (
    <svg class="swatch" viewBox="0 0 28 10" width="28" height="10" aria-hidden="true">
      <line x1="0" y1="5" x2="28" y2="5" class={`trend-line line-${props.level.toLowerCase()}`} />
    </svg>
  );
}

export function Trend(props: { metrics: FindingMetrics }) {
  const days = props.metrics.data;
  const { from, to } = props.metrics.meta;
  const series = LEVELS.map((level) => ({ level, values: days.map((d) => d.severities[level].open) }));
  const top = niceCeiling(Math.max(0, ...series.flatMap((s) => s.values)));
  const plotWidth = WIDTH - LEFT - RIGHT;
  const plotHeight = HEIGHT - TOP - BOTTOM;
  const x = (i: number) => LEFT + (days.length > 1 ? (i * plotWidth) / (days.length - 1) : plotWidth / 2);
  const y = (n: number) => TOP + plotHeight - (n * plotHeight) / top;
  const last = days[days.length - 1];
  const first = days[0];
  const sum = (level: Level, field: 'opened' | 'resolved') =>
    days.reduce((total, d) => total + d.severities[level][field], 0);
  const described = series
    .map((s) => `${s.level} ${count(s.values[0] ?? 0)} to ${count(s.values[s.values.length - 1] ?? 0)}`)
    .join('; ');
  const ticks = [0, top / 2, top];
  const labelled = days.length > 2 ? [0, Math.floor((days.length - 1) / 2), days.length - 1] : days.map((_, i) => i);
  return (
    <div class="trend">
      <svg
        class="chart"
        viewBox={`0 0 ${WIDTH} ${HEIGHT}`}
        width={WIDTH}
        height={HEIGHT}
        role="img"
        aria-labelledby="trend-title"
        aria-describedby="trend-desc"
        data-severities={LEVELS.join(',')}
      >
        <title id="trend-title">
          Open findings by severity, {from} to {to}
        </title>
        <desc id="trend-desc">Open findings from the first day to the last: {described}.</desc>
        {ticks.map((tick) => (
          <g key={tick}>
            <line x1={LEFT} x2={WIDTH - RIGHT} y1={y(tick)} y2={y(tick)} class="grid" />
            <text x={LEFT - 6} y={y(tick) + 4} class="chart-label" text-anchor="end">
              {count(tick)}
            </text>
          </g>
        ))}
        {labelled.map((i) => (
          <text
            key={i}
            x={x(i)}
            y={HEIGHT - 8}
            class="chart-label"
            text-anchor={i === 0 ? 'start' : i === days.length - 1 ? 'end' : 'middle'}
          >
            {shortDay(days[i]!.start)}
          </text>
        ))}
        {series.map((s) => (
          <path
            key={s.level}
            class={`trend-line line-${s.level.toLowerCase()}`}
            data-severity={s.level}
            d={s.values.map((n, i) => `${i === 0 ? 'M' : 'L'}${x(i).toFixed(1)} ${y(n).toFixed(1)}`).join(' ')}
          />
        ))}
      </svg>
      <ul class="legend" aria-label="Legend: open findings on the last day">
        {series.map((s) => (
          <li key={s.level} data-severity={s.level}>
            <Swatch level={s.level} /> {s.level} <strong>{count(s.values[s.values.length - 1] ?? 0)}</strong>
          </li>
        ))}
      </ul>
      {first && last && (
        <table class="compact">
          <caption>
            Findings from {first.start} to {last.end}
          </caption>
          <thead>
            <tr>
              <th scope="col">Severity</th>
              <th scope="col" class="num">
                Open on {shortDay(first.start)}
              </th>
              <th scope="col" class="num">
                Opened
              </th>
              <th scope="col" class="num">
                Resolved
              </th>
              <th scope="col" class="num">
                Open now
              </th>
              <th scope="col" class="num">
                Overdue now
              </th>
            </tr>
          </thead>
          <tbody>
            {LEVELS.map((level) => (
              <tr key={level}>
                <th scope="row">{level}</th>
                <td class="num">{count(first.severities[level].open)}</td>
                <td class="num">{count(sum(level, 'opened'))}</td>
                <td class="num">{count(sum(level, 'resolved'))}</td>
                <td class="num">{count(last.severities[level].open)}</td>
                <td class="num">{count(last.severities[level].overdue)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}
