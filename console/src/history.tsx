// An asset's history: the changes of the change log about it (the asset itself, its findings, the risks on it), newest
// first, each with the fields it moved and its cause. The log reads forwards only, so the page reads every change of the
// asset and keeps the last HISTORY_LIMIT, saying so when there were more.
import type { Change, Client } from '../../src/client/index.js';
import { useApi } from './data.js';
import { ErrorNotice } from './errors.js';
import { count, When } from './format.js';
import { href, Link } from './router.js';
import { DataTable, type Column } from './table.js';

export const HISTORY_LIMIT = 100;

/** The last HISTORY_LIMIT changes of the asset, newest first, and how many there are in all. */
async function loadHistory(client: Client, id: string): Promise<{ changes: Change[]; total: number }> {
  const last: Change[] = [];
  let total = 0;
  for await (const change of client.changes.all({ assetIds: id })) {
    total += 1;
    last.push(change);
    if (last.length > HISTORY_LIMIT) last.shift();
  }
  return { changes: last.reverse(), total };
}

/** A field's value before or after: the tracked fields are numbers, booleans and words; null is a dash. */
const shown = (value: unknown): string =>
  value === null || value === undefined
    ? '—'
    : typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean'
      ? String(value)
      : JSON.stringify(value);

/** What the change is about: the asset itself, one of its findings, or a risk on it. */
function Subject(props: { change: Change; assetId: string }) {
  const { vulnerabilityId, riskId } = props.change;
  if (vulnerabilityId !== null)
    return (
      <Link to={href('vulnerabilities', { assetIds: props.assetId, vulnerabilityIds: vulnerabilityId })}>
        {vulnerabilityId}
      </Link>
    );
  if (riskId !== null) return <Link to={href('risks', { ids: riskId })}>risk {riskId}</Link>;
  return <span class="muted">the asset</span>;
}

function Fields(props: { change: Change }) {
  if (props.change.fields.length === 0) return <span class="muted">—</span>;
  return (
    <ul class="plain">
      {props.change.fields.map((f) => (
        <li key={f.name}>
          {f.name}: {shown(f.before)} → {shown(f.after)}
        </li>
      ))}
    </ul>
  );
}

/** Why it changed: the scan (its id links to the scans), the feed load, the import, a rule, a person, an expiry. */
function Cause(props: { change: Change }) {
  const { kind, scanId, keyId, feed, feedVersion } = props.change.cause;
  switch (kind) {
    case 'scan':
      return (
        <>
          scan {scanId === undefined ? null : <Link to={href('scans')}>{scanId}</Link>}
          {keyId !== undefined && <span class="muted"> (uploaded with key {keyId})</span>}
        </>
      );
    case 'feed':
      return (
        <>
          feed {feed ?? ''} {feedVersion !== undefined && <span class="muted">{feedVersion}</span>}
        </>
      );
    case 'import':
      return <>import</>;
    case 'rule':
      return <>risk rules</>;
    case 'user':
      return <>a user</>;
    case 'expiry':
      return <>expiry</>;
  }
}

export function AssetHistory(props: { id: string }) {
  const { data, error, retry } = useApi((client) => loadHistory(client, props.id), props.id);
  if (error !== undefined) return <ErrorNotice error={error} retry={retry} />;
  if (!data) return <p class="muted">Loading history…</p>;
  if (data.total === 0) return <p data-history="0">No change of this asset is in the change log.</p>;
  const columns: Column<Change>[] = [
    { label: 'When', cell: (c) => <When at={c.at} /> },
    { label: 'Change', cell: (c) => <code>{c.type}</code> },
    { label: 'Of', cell: (c) => <Subject change={c} assetId={props.id} /> },
    { label: 'Fields (before → after)', cell: (c) => <Fields change={c} /> },
    { label: 'Cause', cell: (c) => <Cause change={c} /> },
  ];
  return (
    <>
      <p data-history={data.total}>
        {data.total > data.changes.length
          ? `The last ${count(data.changes.length)} of ${count(data.total)} changes, newest first.`
          : `${count(data.total)} ${data.total === 1 ? 'change' : 'changes'}, newest first.`}
      </p>
      <DataTable
        caption="Changes of this asset, its findings and its risks, newest first"
        columns={columns}
        rows={data.changes}
        rowKey={(c) => c.seq}
      />
    </>
  );
}
