// A log row's Loki labels built in Node from its stored columns, for log
// queries whose pipeline keeps the row's own labels (no parser): the same
// mapping as otlp-labels.ts builds in SQL, done for the returned rows only,
// where ClickHouse's per-row map lambdas cost more than the query itself.
import { labelName, streamAttributes, streamLabelNames, unknownService } from './otlp-labels.ts';

/** The stored columns of one row, as rawLabelColumns selects them. */
export interface RawLogRow {
  readonly ts: string;
  readonly body: string;
  readonly service_name: string;
  readonly resource_attributes: Readonly<Record<string, string>>;
  readonly scope_attributes: Readonly<Record<string, string>>;
  readonly log_attributes: Readonly<Record<string, string>>;
  readonly scope_name: string;
  readonly scope_version: string;
  readonly observed_ns: string;
  readonly severity_number: number;
  readonly severity_text: string;
  readonly trace_flags: number;
  readonly trace_id: string;
  readonly span_id: string;
}

/** The SELECT list of a raw row (the label columns, the time as ns text). */
export const rawLabelColumns = [
  'toString(toUnixTimestamp64Nano(timestamp)) AS ts',
  'body',
  'service_name',
  'resource_attributes',
  'scope_attributes',
  'log_attributes',
  'scope_name',
  'scope_version',
  'toString(toUnixTimestamp64Nano(observed_timestamp)) AS observed_ns',
  'severity_number',
  'severity_text',
  'trace_flags',
  'trace_id',
  'span_id',
].join(', ');

const streamSet = new Set(streamAttributes);

function detectedLevel(n: number): string {
  if (n === 0) return 'unknown';
  const levels: readonly [number, string][] = [
    [4, 'trace'],
    [8, 'debug'],
    [12, 'info'],
    [16, 'warn'],
    [20, 'error'],
    [24, 'fatal'],
  ];
  return levels.find(([max]) => n <= max)?.[1] ?? 'unknown';
}

/** The row's labels, keys sorted, empty values left out: stream labels, then structured metadata over them. */
export function rowLabels(r: RawLogRow): Record<string, string> {
  const labels = new Map<string, string>();
  streamAttributes.forEach((attr, i) => {
    const value = attr === 'service.name' ? (r.service_name === '' ? unknownService : r.service_name) : (r.resource_attributes[attr] ?? '');
    if (value !== '') labels.set(streamLabelNames[i] ?? '', value);
  });
  // Metadata in otlp-labels.ts's mapConcat order, a later source winning: log attributes, record fields, resource, scope.
  const metadata = new Map<string, string>();
  for (const [k, v] of Object.entries(r.log_attributes)) metadata.set(labelName(k), v);
  const fields: [string, string][] = [
    ['observed_timestamp', r.observed_ns === '0' ? '' : r.observed_ns],
    ['severity_number', r.severity_number === 0 ? '' : String(r.severity_number)],
    ['severity_text', r.severity_text],
    ['flags', r.trace_flags === 0 ? '' : String(r.trace_flags)],
    ['trace_id', r.trace_id],
    ['span_id', r.span_id],
    ['scope_name', r.scope_name],
    ['scope_version', r.scope_version],
    ['detected_level', detectedLevel(r.severity_number)],
  ];
  for (const [k, v] of fields) metadata.set(k, v);
  for (const [k, v] of Object.entries(r.resource_attributes)) if (!streamSet.has(k)) metadata.set(labelName(k), v);
  for (const [k, v] of Object.entries(r.scope_attributes)) metadata.set(labelName(k), v);
  for (const [k, v] of metadata) if (v !== '') labels.set(k, v);
  return Object.fromEntries([...labels].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}
