// A whole trace by its id, for Tempo's /api/traces/:id and
// /api/v2/traces/:id. The trace index (migration 8, tables.ts traceIndex)
// gives the time range of the trace's spans, so the spans query reads only
// those days' parts and granules instead of the tenant's whole window.
import { queryTable } from '../../../src/clickhouse/schema/ddl.ts';
import type { SchemaTarget } from '../../../src/clickhouse/schema/ddl.ts';
import type { Result } from '../../../src/result.ts';
import { ok } from '../../../src/result.ts';
import type { ApiError } from '../../http/api-error.ts';
import type { Statement, TenantScan } from '../../query/tenant-scan.ts';
import type { TimeRange } from '../../query/time-range.ts';
import type { RouteDeps } from '../../query/deps.ts';
import { resourceSpans } from './otlp-json.ts';
import type { OtlpResourceSpans, SpanRow } from './otlp-json.ts';

/** A trace id as Tempo accepts it: 1-32 hex digits, left-padded with zeros to 32; or a message for a 400. */
export function parseTraceId(raw: string): Result<string, string> {
  const bad = /[^0-9a-fA-F]/.exec(raw);
  if (bad !== null) return { ok: false, error: `trace IDs can only contain hex characters: invalid character '${bad[0]}' at position ${bad.index + 1}` };
  if (raw.length === 0 || raw.length > 32) return { ok: false, error: `trace IDs can't be longer than 128 bits: ${raw.length} hex digits` };
  return ok(raw.toLowerCase().padStart(32, '0'));
}

/** Most spans one trace lookup returns; v2 answers a larger trace as PARTIAL, as Tempo does for a trace over its size limit. */
export const maxTraceSpans = 100_000;

/** A trace's spans as OTLP, and whether spans past maxTraceSpans were left out. */
export interface FoundTrace {
  readonly spans: OtlpResourceSpans[];
  readonly partial: boolean;
}

const columns = [
  'toString(toUnixTimestamp64Nano(timestamp)) AS ts_ns',
  'toString(toUnixTimestamp64Nano(timestamp) + toInt64(duration_ns)) AS end_ns',
  'trace_id',
  'span_id',
  'parent_span_id',
  'trace_state',
  'flags',
  'span_name',
  'toString(span_kind) AS span_kind',
  'toString(status_code) AS status_code',
  'status_message',
  'resource_schema_url',
  'resource_attributes',
  'scope_name',
  'scope_version',
  'scope_attributes',
  'span_attributes',
  'arrayMap(t -> toString(toUnixTimestamp64Nano(t)), event_timestamps) AS event_ts',
  'event_names',
  'event_attributes',
  'link_trace_ids',
  'link_span_ids',
  'link_trace_states',
  'link_attributes',
  'dropped_attributes_count',
  'dropped_events_count',
  'dropped_links_count',
];

/**
 * The spans query of one trace. With the index, the window shrinks to the
 * trace's own [first, last] span times (every span of the trace is inside);
 * the bloom filter on trace_id then skips the other granules of those days.
 */
export function traceSql(schema: SchemaTarget, scan: TenantScan, traceId: string, range: TimeRange, useIndex = true): Statement {
  const statement = scan.statement();
  const { params } = statement;
  const id = params.bind(traceId, 'String');
  const start = `fromUnixTimestamp64Nano(${params.bind(range.startNs.toString(), 'Int64')})`;
  const end = `fromUnixTimestamp64Nano(${params.bind(range.endNs.toString(), 'Int64')})`;
  const index = queryTable(schema, 'trace_index');
  // No index row (spans written before migration 8 finished, or an index row past its TTL): the window alone.
  // `useIndex` false is the lookup before migration 8 (kept to measure the index against).
  const sql = `${useIndex ? `WITH (SELECT (minOrNull(first_seen), maxOrNull(last_seen)) FROM ${index} WHERE ${statement.tenantIs()} AND trace_id = ${id}) AS bounds\n    ` : ''}SELECT ${columns.join(', ')}
    FROM ${queryTable(schema, 'spans')}
    WHERE ${statement.tenantIs()} AND trace_id = ${id}
      AND ${useIndex ? `timestamp >= greatest(${start}, ifNull(bounds.1, ${start})) AND timestamp <= least(${end}, ifNull(bounds.2, ${end}))` : `timestamp >= ${start} AND timestamp <= ${end}`}
    ORDER BY timestamp, span_id
    LIMIT ${params.bind(maxTraceSpans + 1, 'UInt64')}`;
  return statement.finish(sql);
}

/** The trace's spans as OTLP ResourceSpans (none when the tenant has no such trace in the window), at most maxTraceSpans. */
export async function traceById(deps: RouteDeps, scan: TenantScan, traceId: string, range: TimeRange): Promise<Result<FoundTrace, ApiError>> {
  const rows = await deps.runner.manyRows<SpanRow>(traceSql(deps.schema, scan, traceId, range));
  if (!rows.ok) return rows;
  const partial = rows.value.length > maxTraceSpans;
  return ok({ spans: resourceSpans(partial ? rows.value.slice(0, maxTraceSpans) : rows.value), partial });
}
