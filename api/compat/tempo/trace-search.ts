// Tempo's search (/api/search) over the spans table: TraceQL, or the legacy
// tag parameters. One query finds the matching traces (per trace, the
// spans of each spanset filter, counted, and up to `spss` of them kept),
// newest first; a second one describes those traces whole (root span,
// start, duration), as Tempo's results carry them.
import { queryTable } from '../../../src/clickhouse/schema/ddl.ts';
import type { Result } from '../../../src/result.ts';
import { fail, ok } from '../../../src/result.ts';
import type { ApiError } from '../../http/api-error.ts';
import { invalidRequest } from '../../http/api-error.ts';
import type { SqlParams } from '../../query/sql-params.ts';
import type { ScanStatement, Statement, TenantScan } from '../../query/tenant-scan.ts';
import type { TimeRange } from '../../query/time-range.ts';
import type { RouteDeps } from '../../query/deps.ts';
import { typedValue } from './otlp-json.ts';
import type { OtlpAnyValue } from './otlp-json.ts';
import type { Condition, Field, TraceQuery } from './traceql-parser.ts';
import { conditionSql, fieldsOf, filtersOf, needsTraceJoin, spansetsSql, traceColumns } from './traceql-sql.ts';

export interface SearchSpan {
  spanID: string;
  name?: string;
  startTimeUnixNano: string;
  durationNanos: string;
  attributes?: { key: string; value: OtlpAnyValue }[];
}

export interface SearchTrace {
  traceID: string;
  rootServiceName: string;
  rootTraceName?: string;
  startTimeUnixNano: string;
  durationMs?: number;
  spanSet?: { spans: SearchSpan[]; matched: number };
  spanSets?: { spans: SearchSpan[]; matched: number }[];
}

export interface SearchOptions {
  readonly range: TimeRange;
  readonly limit: number;
  /** Spans kept per spanset (Tempo's `spss`). */
  readonly spss: number;
}

/**
 * Most bytes of a search statement: ClickHouse refuses one longer than
 * max_query_size (256 KiB), and the runner appends its SETTINGS clause. The
 * query's own bounds (traceql-parser.ts, maxSearchTags) keep a statement far
 * below; this is the last guard, a 400 naming the parameter.
 */
export const maxStatementBytes = 200_000;

/** Rows of a search statement once it is known to fit; `name` is the parameter it was built from. */
async function searchRows<T>(deps: RouteDeps, statement: Statement, name: string): Promise<Result<T[], ApiError>> {
  const bytes = Buffer.byteLength(statement.sql);
  if (bytes > maxStatementBytes)
    return fail(
      invalidRequest(
        `invalid ${name}: the search is too complex (its statement would take ${bytes} bytes, more than ${maxStatementBytes}): use fewer conditions`,
      ),
    );
  return deps.runner.rows<T>(statement);
}

/** Tempo shows trace ids without leading zeros. */
export const searchTraceId = (hex: string): string => hex.replace(/^0+(?=.)/, '');

function windowSql(statement: ScanStatement, range: TimeRange): string {
  return `${statement.tenantIs()}
      AND timestamp >= fromUnixTimestamp64Nano(${statement.bind(range.startNs.toString(), 'Int64')})
      AND timestamp < fromUnixTimestamp64Nano(${statement.bind(range.endNs.toString(), 'Int64')})`;
}

/** The per-trace columns (root name and service, duration) over the window, for trace-level intrinsics. */
function traceJoin(deps: RouteDeps, statement: ScanStatement, range: TimeRange): string {
  return `INNER JOIN (
      SELECT trace_id, argMinIf(span_name, timestamp, parent_span_id = '') AS ${traceColumns.rootName},
        argMinIf(service_name, timestamp, parent_span_id = '') AS ${traceColumns.rootServiceName},
        max(toUnixTimestamp64Nano(timestamp) + toInt64(duration_ns)) - min(toUnixTimestamp64Nano(timestamp)) AS ${traceColumns.traceDuration}
      FROM ${queryTable(deps.schema, 'spans')} WHERE ${windowSql(statement, range)} GROUP BY trace_id) AS t USING trace_id`;
}

/** A comparison of a filter, with the SQL deciding whether it holds on a span row. */
interface Shown {
  readonly field: Field;
  readonly when: string;
}

/** Every comparison of a condition, left to right. */
function comparisons(c: Condition): (Condition & { kind: 'compare' })[] {
  if (c.kind === 'compare') return [c];
  if (c.kind === 'true') return [];
  return [...comparisons(c.left), ...comparisons(c.right)];
}

/**
 * What a matched span shows besides its id and times, as Tempo shows it:
 * the attribute or intrinsic of every comparison that holds on the span,
 * and every selected field the span has. Rows: [key, value, how] with how
 * 's' (a string as is) or 't' (typed from its text, otlp-json.ts); the
 * name intrinsic becomes the span's `name` field.
 */
function shownSql(params: SqlParams, filters: readonly Condition[], select: readonly Field[]): string {
  const shown: Shown[] = [
    ...filters.flatMap(comparisons).flatMap((c): Shown[] => {
      if (c.field.kind === 'attribute' && c.field.scope === 'any') {
        // An unscoped comparison shows the value of the scope where it held.
        return (['span', 'resource'] as const).map((scope) => {
          const field: Field = { kind: 'attribute', scope, name: c.field.kind === 'attribute' ? c.field.name : '' };
          return { field, when: conditionSql(params, { ...c, field }) };
        });
      }
      return [{ field: c.field, when: conditionSql(params, c) }];
    }),
    ...select.map((field) => ({ field, when: '1' })),
  ];
  const pairs = shown.flatMap(({ field, when }): string[] => {
    if (field.kind === 'intrinsic') {
      const pair = {
        name: "tuple('name', span_name, 's')",
        status: "tuple('status', lower(toString(status_code)), 's')",
        kind: "tuple('kind', lower(toString(span_kind)), 's')",
        statusMessage: "if(status_message = '', tuple('', '', ''), tuple('statusMessage', status_message, 's'))",
      }[field.name as string];
      return pair === undefined ? [] : [`if(${when}, ${pair}, tuple('', '', ''))`];
    }
    if (field.scope === 'resource' && field.name === 'service.name')
      return [`if(${when} AND service_name != '', tuple('service.name', service_name, 't'), tuple('', '', ''))`];
    const key = params.bind(field.name, 'String');
    const maps =
      field.scope === 'span' ? ['span_attributes'] : field.scope === 'resource' ? ['resource_attributes'] : ['span_attributes', 'resource_attributes'];
    return maps.map((m) => `if(${when} AND mapContains(${m}, ${key}), tuple(${key}, ${m}[${key}], 't'), tuple('', '', ''))`);
  });
  return pairs.length === 0 ? "CAST([], 'Array(Tuple(String, String, String))')" : `arrayFilter(x -> x.1 != '', [${pairs.join(', ')}])`;
}

interface MatchRow {
  trace_id: string;
  matched: string;
  spans: [string, string, string, [string, string, string][]][];
}

/** A matched span as Tempo shows it: one entry per key (the first that held), `name` as a field. */
function searchSpan(spanID: string, startTimeUnixNano: string, durationNanos: string, shownRows: readonly [string, string, string][]): SearchSpan {
  const seen = new Set<string>();
  let name: string | undefined;
  const attributes: { key: string; value: OtlpAnyValue }[] = [];
  for (const [key, value, how] of shownRows) {
    if (seen.has(key)) continue;
    seen.add(key);
    if (key === 'name' && how === 's') name = value;
    else attributes.push({ key, value: how === 's' ? { stringValue: value } : typedValue(value) });
  }
  return { spanID, ...(name === undefined ? {} : { name }), startTimeUnixNano, durationNanos, ...(attributes.length === 0 ? {} : { attributes }) };
}

interface DescribeRow {
  trace_id: string;
  start_ns: string;
  end_ns: string;
  root_name: string;
  root_service: string;
  roots: string;
}

/** Start, duration and root of each trace in `ids`, over the window. */
async function describe(deps: RouteDeps, scan: TenantScan, ids: readonly string[], range: TimeRange): Promise<Result<Map<string, DescribeRow>, ApiError>> {
  if (ids.length === 0) return ok(new Map());
  const statement = scan.statement();
  const { params } = statement;
  const sql = `SELECT trace_id, toString(min(toUnixTimestamp64Nano(timestamp))) AS start_ns,
      toString(max(toUnixTimestamp64Nano(timestamp) + toInt64(duration_ns))) AS end_ns,
      argMinIf(span_name, timestamp, parent_span_id = '') AS root_name, argMinIf(service_name, timestamp, parent_span_id = '') AS root_service,
      toString(countIf(parent_span_id = '')) AS roots
    FROM ${queryTable(deps.schema, 'spans')}
    WHERE ${windowSql(statement, range)} AND trace_id IN ${params.bind(ids, 'Array(String)')}
    GROUP BY trace_id`;
  const rows = await deps.runner.rows<DescribeRow>(statement.finish(sql));
  if (!rows.ok) return rows;
  return ok(new Map(rows.value.map((r) => [r.trace_id, r])));
}

function summary(id: string, d: DescribeRow | undefined): SearchTrace {
  const start = BigInt(d?.start_ns ?? '0');
  const durationMs = Number((BigInt(d?.end_ns ?? '0') - start) / 1_000_000n);
  const hasRoot = d !== undefined && d.roots !== '0';
  return {
    traceID: searchTraceId(id),
    rootServiceName: hasRoot ? d.root_service : '<root span not yet received>',
    ...(hasRoot && d.root_name !== '' ? { rootTraceName: d.root_name } : {}),
    startTimeUnixNano: start.toString(),
    ...(durationMs > 0 ? { durationMs } : {}),
  };
}

/** Traces matching a TraceQL query, newest first, as Tempo's search answers them. */
export async function searchTraceQl(deps: RouteDeps, scan: TenantScan, query: TraceQuery, options: SearchOptions): Promise<Result<SearchTrace[], ApiError>> {
  const statement = scan.statement();
  const { params } = statement;
  const filters: Condition[] = filtersOf(query.spansets);
  const read = filters.flatMap(fieldsOf);
  const join = needsTraceJoin([...read, ...query.select]) ? traceJoin(deps, statement, options.range) : '';
  const marks = filters.map((f, i) => `${conditionSql(params, f)} AS m${i}`);
  const shown = shownSql(params, filters, query.select);
  // The marks' aliases filter inside the subquery, so the shown attributes are built for matching spans only.
  const anyMark = filters.map((_f, i) => `m${i}`).join(' OR ');
  const counts = filters.map((_f, i) => `countIf(m${i}) AS c${i}`).join(', ');
  const sql = `SELECT trace_id, toString(count()) AS matched,
      groupArray(${params.bind(options.spss, 'UInt64')})(tuple(span_id, toString(toUnixTimestamp64Nano(timestamp)), toString(duration_ns), shown)) AS spans,
      ${counts}, min(timestamp) AS first
    FROM (
      SELECT trace_id, span_id, timestamp, duration_ns, ${shown} AS shown, ${marks.join(', ')}
      FROM ${queryTable(deps.schema, 'spans')} ${join}
      WHERE ${windowSql(statement, options.range)} AND (${anyMark})
    )
    GROUP BY trace_id
    HAVING ${spansetsSql(query.spansets)}
    ORDER BY first DESC, trace_id
    LIMIT ${params.bind(options.limit, 'UInt64')}`;
  const rows = await searchRows<MatchRow>(deps, statement.finish(sql), 'q');
  if (!rows.ok) return rows;
  const described = await describe(
    deps,
    scan,
    rows.value.map((r) => r.trace_id),
    options.range,
  );
  if (!described.ok) return described;
  const traces = rows.value.map((r) => {
    const spans = r.spans.map(([spanID, startTimeUnixNano, durationNanos, shownRows]) => searchSpan(spanID, startTimeUnixNano, durationNanos, shownRows));
    const set = { spans, matched: Number(r.matched) };
    return { ...summary(r.trace_id, described.value.get(r.trace_id)), spanSet: set, spanSets: [set] };
  });
  return ok(sortNewestFirst(traces));
}

function sortNewestFirst(traces: SearchTrace[]): SearchTrace[] {
  return traces.sort((a, b) =>
    BigInt(b.startTimeUnixNano) > BigInt(a.startTimeUnixNano) ? 1 : BigInt(b.startTimeUnixNano) < BigInt(a.startTimeUnixNano) ? -1 : 0,
  );
}

/** Attributes Tempo's tag search matches by substring; every other tag is matched exactly. */
const substringTags = new Set(['service.name', 'name', 'http.url', 'rootServiceName', 'rootName']);

export interface TagSearch {
  readonly tags: ReadonlyMap<string, string>;
  readonly minDurationNs?: bigint;
  readonly maxDurationNs?: bigint;
}

/** Traces whose spans carry every tag (any span for each), with the trace's duration in bounds: Tempo's legacy tag search. */
export async function searchTags(deps: RouteDeps, scan: TenantScan, search: TagSearch, options: SearchOptions): Promise<Result<SearchTrace[], ApiError>> {
  const statement = scan.statement();
  const { params } = statement;
  const marks = [...search.tags].map(([key, value], i) => {
    const v = params.bind(value, 'String');
    const text = (column: string): string => (substringTags.has(key) ? `position(${column}, ${v}) > 0` : `${column} = ${v}`);
    if (key === 'name') return `countIf(${text('span_name')}) AS c${i}`;
    if (key === 'status') return `countIf(lower(toString(status_code)) = ${v}) AS c${i}`;
    const k = params.bind(key, 'String');
    return `countIf((mapContains(span_attributes, ${k}) AND ${text(`span_attributes[${k}]`)}) OR (mapContains(resource_attributes, ${k}) AND ${text(`resource_attributes[${k}]`)})) AS c${i}`;
  });
  const having = [
    ...marks.map((_m, i) => `c${i} > 0`),
    ...(search.minDurationNs === undefined ? [] : [`trace_ns >= ${params.bind(search.minDurationNs.toString(), 'Int64')}`]),
    ...(search.maxDurationNs === undefined ? [] : [`trace_ns <= ${params.bind(search.maxDurationNs.toString(), 'Int64')}`]),
  ];
  const sql = `SELECT trace_id, ${[...marks, ''].join(', ')}
      max(toUnixTimestamp64Nano(timestamp) + toInt64(duration_ns)) - min(toUnixTimestamp64Nano(timestamp)) AS trace_ns, min(timestamp) AS first
    FROM ${queryTable(deps.schema, 'spans')}
    WHERE ${windowSql(statement, options.range)}
    GROUP BY trace_id
    ${having.length === 0 ? '' : `HAVING ${having.join(' AND ')}`}
    ORDER BY first DESC, trace_id
    LIMIT ${params.bind(options.limit, 'UInt64')}`;
  const rows = await searchRows<{ trace_id: string }>(deps, statement.finish(sql), 'tags');
  if (!rows.ok) return rows;
  const described = await describe(
    deps,
    scan,
    rows.value.map((r) => r.trace_id),
    options.range,
  );
  if (!described.ok) return described;
  return ok(sortNewestFirst(rows.value.map((r) => summary(r.trace_id, described.value.get(r.trace_id)))));
}
