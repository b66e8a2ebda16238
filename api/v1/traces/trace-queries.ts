// The traces query: spans of one tenant and window, filtered, newest first.
import { queryTable } from '../../../src/clickhouse/schema/ddl.ts';
import type { Result } from '../../../src/result.ts';
import { fail, mapValue } from '../../../src/result.ts';
import type { ApiError } from '../../http/api-error.ts';
import { invalidRequest } from '../../http/api-error.ts';
import { envelope } from '../../http/pagination.ts';
import type { Envelope } from '../../http/pagination.ts';
import { matchAny, matchAttributes } from '../query/filters.ts';
import { byteBoundedPage, finishPage, mapBytes, mergeAttributes, planPage, windowConditions } from '../query/record-page.ts';
import type { BoundedRow, PagePlan } from '../query/record-page.ts';
import { nsTextToMs } from '../../query/time-range.ts';
import type { RouteDeps } from '../../query/deps.ts';
import type { TraceQuery } from './trace-codecs.ts';
import type { ScanCaller, Statement } from '../../query/tenant-scan.ts';
import { TenantScan } from '../../query/tenant-scan.ts';

export interface SpanRecord {
  timestamp: number;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  spanName: string;
  spanKind: string;
  serviceName: string;
  duration: number;
  statusCode: string;
  statusMessage: string | null;
  attributes?: Record<string, string>;
}

interface SpanRow extends BoundedRow {
  ts_ns: string;
  trace_id: string;
  span_id: string;
  parent_span_id: string;
  span_name: string;
  span_kind: string;
  service_name: string;
  duration: string;
  status_code: string;
  status_message: string;
  resource_attributes?: Record<string, string>;
  scope_attributes?: Record<string, string>;
  span_attributes?: Record<string, string>;
}

/** Builds the SELECT of one traces page. */
function tracesSql(deps: RouteDeps, scan: TenantScan, q: TraceQuery, plan: PagePlan): Statement {
  const statement = scan.statement();
  const { params } = statement;
  const where = windowConditions(statement, plan, ['trace_id', 'span_id']);
  if (q.traceId !== undefined) where.push(matchAny(params, 'trace_id', q.traceId));
  if (q.spanId !== undefined) where.push(matchAny(params, 'span_id', q.spanId));
  if (q.parentSpanId !== undefined) where.push(matchAny(params, 'parent_span_id', q.parentSpanId));
  if (q.spanName !== undefined) where.push(matchAny(params, 'span_name', q.spanName));
  // OTLP treats an unspecified kind as internal.
  if (q.spanKind !== undefined)
    where.push(`toString(span_kind) IN ${params.bind(q.spanKind.includes('INTERNAL') ? [...q.spanKind, 'UNSPECIFIED'] : q.spanKind, 'Array(String)')}`);
  if (q.statusCode !== undefined) where.push(`toString(status_code) IN ${params.bind(q.statusCode, 'Array(String)')}`);
  // Bigints: durations beyond 2^53 ns (104 days) are integers a client may send, and the store binds only safe integers from numbers.
  if (q.durationMin !== undefined) where.push(`duration_ns >= ${params.bind(BigInt(Math.ceil(q.durationMin)), 'UInt64')}`);
  if (q.durationMax !== undefined) where.push(`duration_ns <= ${params.bind(BigInt(Math.floor(q.durationMax)), 'UInt64')}`);
  if (q.attributes !== undefined) where.push(...matchAttributes(params, ['resource_attributes', 'scope_attributes', 'span_attributes'], q.attributes));
  const maps = q.includeAttributes === true ? ['resource_attributes', 'scope_attributes', 'span_attributes'] : [];
  const columns = [
    'toString(toUnixTimestamp64Nano(timestamp)) AS ts_ns',
    'trace_id',
    'span_id',
    'parent_span_id',
    'span_name',
    'toString(span_kind) AS span_kind',
    'service_name',
    'toString(duration_ns) AS duration',
    'toString(status_code) AS status_code',
    'status_message',
    ...maps,
  ];
  // A span's bytes in the answer: its strings, its attributes, and about 250 bytes of field names and fixed-size values.
  const rowBytes = [
    '250',
    ...['trace_id', 'span_id', 'parent_span_id', 'span_name', 'service_name', 'status_message'].map((c) => `length(${c})`),
    ...maps.map(mapBytes),
  ].join(' + ');
  const inner = `SELECT ${columns.join(', ')}, toUnixTimestamp64Nano(timestamp) AS page_ts, ${rowBytes} AS row_bytes FROM ${queryTable(deps.schema, 'spans')}
    WHERE ${where.join('\n      AND ')}
    ORDER BY timestamp DESC, trace_id DESC, span_id DESC LIMIT ${params.bind(plan.limit + 1, 'UInt64')}`;
  const names = columns.map((c) => c.split(' AS ').pop() ?? c);
  return statement.finish(byteBoundedPage(params, plan, inner, names, 'page_ts DESC, trace_id DESC, span_id DESC'));
}

/** One page of spans and the cursor for the next. */
export async function queryTraces(
  deps: RouteDeps,
  scan: TenantScan,
  q: TraceQuery,
  plan: PagePlan,
): Promise<Result<{ rows: readonly SpanRecord[]; next: string | null }, ApiError>> {
  const rows = await deps.runner.rows<SpanRow>(tracesSql(deps, scan, q, plan));
  if (!rows.ok) return rows;
  const page = finishPage(plan, rows.value, (r) => [r.ts_ns, r.trace_id, r.span_id], rows.value[0]?.page_fetched);
  return {
    ok: true,
    value: {
      next: page.next,
      rows: page.rows.map((r) => ({
        timestamp: nsTextToMs(r.ts_ns),
        traceId: r.trace_id,
        spanId: r.span_id,
        parentSpanId: r.parent_span_id,
        spanName: r.span_name,
        spanKind: r.span_kind === 'UNSPECIFIED' ? 'INTERNAL' : r.span_kind,
        serviceName: r.service_name,
        duration: Number(r.duration),
        statusCode: r.status_code,
        statusMessage: r.status_message === '' ? null : r.status_message,
        ...(q.includeAttributes === true ? { attributes: mergeAttributes(r.resource_attributes, r.scope_attributes, r.span_attributes) } : {}),
      })),
    },
  };
}

/** The page of spans a request asks for, in the page envelope. */
export async function tracePage(deps: RouteDeps, caller: ScanCaller, q: TraceQuery): Promise<Result<Envelope<SpanRecord>, ApiError>> {
  if (q.durationMin !== undefined && q.durationMax !== undefined && q.durationMin > q.durationMax)
    return fail(invalidRequest('durationMin is greater than durationMax'));
  const scan = TenantScan.open(deps, caller, 'traces');
  const plan = planPage('traces', scan, q, 2, deps.now(), deps.pageMaxBytes);
  if (!plan.ok) return plan;
  return mapValue(await queryTraces(deps, scan, q, plan.value), (page) => envelope(page.rows, page.next));
}
