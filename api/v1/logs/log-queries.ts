// The logs query: tenant and window first, then filters, newest first.
import { queryTable } from '../../../src/clickhouse/schema/ddl.ts';
import type { Result } from '../../../src/result.ts';
import { mapValue } from '../../../src/result.ts';
import type { ApiError } from '../../http/api-error.ts';
import { matchAny, matchAnyInsensitive, matchAttributes, matchSeverity, severityName } from '../query/filters.ts';
import { envelope } from '../../http/pagination.ts';
import type { Envelope } from '../../http/pagination.ts';
import { byteBoundedPage, finishPage, mapBytes, mergeAttributes, planPage, windowConditions } from '../query/record-page.ts';
import type { BoundedRow, PagePlan } from '../query/record-page.ts';
import { nsTextToMs } from '../../query/time-range.ts';
import type { RouteDeps } from '../../query/deps.ts';
import type { LogQuery } from './log-codecs.ts';
import type { ScanCaller, Statement } from '../../query/tenant-scan.ts';
import { TenantScan } from '../../query/tenant-scan.ts';

export interface LogRecord {
  timestamp: number;
  traceId: string;
  spanId: string;
  severity: string;
  serviceName: string;
  body: string;
  logId: string;
  attributes?: Record<string, string>;
}

interface LogRow extends BoundedRow {
  ts_ns: string;
  log_id: string;
  trace_id: string;
  span_id: string;
  severity_number: number;
  service_name: string;
  body: string;
  resource_attributes?: Record<string, string>;
  scope_attributes?: Record<string, string>;
  log_attributes?: Record<string, string>;
}

/** Builds the SELECT of one logs page. */
function logsSql(deps: RouteDeps, scan: TenantScan, q: LogQuery, plan: PagePlan): Statement {
  const statement = scan.statement();
  const { params } = statement;
  const where = windowConditions(statement, plan, ['log_id']);
  if (q.body !== undefined) where.push(matchAnyInsensitive(params, 'body', q.body));
  if (q.traceId !== undefined) where.push(matchAny(params, 'trace_id', q.traceId));
  if (q.spanId !== undefined) where.push(matchAny(params, 'span_id', q.spanId));
  if (q.logId !== undefined) where.push(matchAny(params, 'log_id', q.logId));
  if (q.severity !== undefined) where.push(matchSeverity(params, 'severity_number', q.severity));
  if (q.attributes !== undefined) where.push(...matchAttributes(params, ['resource_attributes', 'scope_attributes', 'log_attributes'], q.attributes));
  const maps = q.includeAttributes === true ? ['resource_attributes', 'scope_attributes', 'log_attributes'] : [];
  const columns = ['toString(toUnixTimestamp64Nano(timestamp)) AS ts_ns', 'log_id', 'trace_id', 'span_id', 'severity_number', 'service_name', 'body', ...maps];
  // A record's bytes in the answer: its strings, its attributes, and about 150 bytes of field names and fixed-size values.
  const rowBytes = ['150', ...['log_id', 'trace_id', 'span_id', 'service_name', 'body'].map((c) => `length(${c})`), ...maps.map(mapBytes)].join(' + ');
  const inner = `SELECT ${columns.join(', ')}, toUnixTimestamp64Nano(timestamp) AS page_ts, ${rowBytes} AS row_bytes FROM ${queryTable(deps.schema, 'logs')}
    WHERE ${where.join('\n      AND ')}
    ORDER BY timestamp DESC, log_id DESC LIMIT ${params.bind(plan.limit + 1, 'UInt64')}`;
  const names = columns.map((c) => c.split(' AS ').pop() ?? c);
  return statement.finish(byteBoundedPage(params, plan, inner, names, 'page_ts DESC, log_id DESC'));
}

/** One page of log records and the cursor for the next. */
export async function queryLogs(
  deps: RouteDeps,
  scan: TenantScan,
  q: LogQuery,
  plan: PagePlan,
): Promise<Result<{ rows: readonly LogRecord[]; next: string | null }, ApiError>> {
  const rows = await deps.runner.rows<LogRow>(logsSql(deps, scan, q, plan));
  if (!rows.ok) return rows;
  const page = finishPage(plan, rows.value, (r) => [r.ts_ns, r.log_id], rows.value[0]?.page_fetched);
  return {
    ok: true,
    value: {
      next: page.next,
      rows: page.rows.map((r) => ({
        timestamp: nsTextToMs(r.ts_ns),
        traceId: r.trace_id,
        spanId: r.span_id,
        severity: severityName(r.severity_number),
        serviceName: r.service_name,
        body: r.body,
        logId: r.log_id,
        ...(q.includeAttributes === true ? { attributes: mergeAttributes(r.resource_attributes, r.scope_attributes, r.log_attributes) } : {}),
      })),
    },
  };
}

/** The page of log records a request asks for, in the page envelope. */
export async function logPage(deps: RouteDeps, caller: ScanCaller, q: LogQuery): Promise<Result<Envelope<LogRecord>, ApiError>> {
  const scan = TenantScan.open(deps, caller, 'logs');
  const plan = planPage('logs', scan, q, 1, deps.now(), deps.pageMaxBytes);
  if (!plan.ok) return plan;
  return mapValue(await queryLogs(deps, scan, q, plan.value), (page) => envelope(page.rows, page.next));
}
