// How values read in the console: dates in UTC to the minute, counts with separators, severities as labelled badges.
import type { ComponentChildren } from 'preact';

export const count = (n: number): string => n.toLocaleString('en-US');

/** `2026-03-01 14:05 UTC`; the full timestamp in the title. */
export function When(props: { at: string | null | undefined }) {
  if (!props.at) return <span class="muted">—</span>;
  const date = new Date(props.at);
  if (Number.isNaN(date.getTime())) return <span>{props.at}</span>;
  return (
    <time dateTime={props.at} title={props.at}>
      {date.toISOString().slice(0, 16).replace('T', ' ')} UTC
    </time>
  );
}

export const yesNo = (value: boolean | null | undefined): string =>
  value === true ? 'yes' : value === false ? 'no' : '—';

/** A severity as text on a colour (the text alone carries it; the colour only helps scanning). */
export function Severity(props: { level: string }) {
  return <span class={`badge sev-${props.level.toLowerCase()}`}>{props.level}</span>;
}

/** A yes/no flag shown only when set: `KEV`, `exploit`, `public`. */
export function Flag(props: { on: boolean | undefined; label: string; title: string }) {
  return props.on ? (
    <span class="flag" title={props.title}>
      {props.label}
    </span>
  ) : null;
}

/** A titled list of a record's entries (factors, packages, exploits…): `empty` when it has none, else nothing. */
export function Items<T>(props: {
  title: string;
  items: readonly T[];
  item: (entry: T) => ComponentChildren;
  empty?: string;
}) {
  const { title, items, empty } = props;
  if (items.length === 0 && empty === undefined) return null;
  return (
    <>
      <h3>{title}</h3>
      {items.length === 0 ? (
        <p class="muted">{empty}</p>
      ) : (
        <ul>
          {items.map((entry, i) => (
            <li key={i}>{props.item(entry)}</li>
          ))}
        </ul>
      )}
    </>
  );
}

export const RISK_SEVERITIES = ['CRITICAL', 'HIGH', 'MEDIUM', 'LOW'] as const;
export const FINDING_SEVERITIES = ['CRITICAL', 'HIGH', 'MEDIUM', 'LOW', 'INFORMATIONAL', 'UNKNOWN'] as const;
export const PROVIDERS = ['AWS', 'Azure', 'GCP', 'Kubernetes'] as const;
