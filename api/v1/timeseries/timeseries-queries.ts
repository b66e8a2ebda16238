// The timeseries query. Metadata first (type, temporality, unit per metric),
// then per metric either one aggregating SELECT (gauges and sums: avg, sum,
// min, max, count, last, percentiles of raw values) or the raw points of the
// window (rates, increases, histograms, summaries) folded by series-math.
import { queryTable } from '../../../src/clickhouse/schema/ddl.ts';
import { fail, invalidRequest, ok } from '../../http/api-error.ts';
import type { Result } from '../../http/api-error.ts';
import { matchAttributes } from '../query/filters.ts';
import { SqlParams } from '../query/sql-params.ts';
import type { RouteDeps } from '../deps.ts';
import type { BucketPlan } from './bucket-plan.ts';
import { quantileOf, seriesValues } from './series-math.ts';
import type { MetricType, RawPoint } from './series-math.ts';
import type { Operator, SeriesQuery } from './timeseries-codecs.ts';

export interface Window {
  readonly tenantId: string;
  readonly startNs: bigint;
  readonly endNs: bigint;
  readonly buckets: BucketPlan;
}

export interface MetricInfo {
  readonly name: string;
  readonly type: MetricType;
  readonly temporality: string;
  readonly monotonic: boolean;
  readonly unit: string;
  readonly description: string;
}

export interface SeriesData {
  readonly metric: MetricInfo;
  readonly labels: Readonly<Record<string, string>>;
  readonly values: readonly (number | null)[];
}

/** Most series one request may return. */
export const maxSeries = 1000;
/** Most raw points one metric may fold in memory. */
export const maxRawPoints = 500_000;

const lookbackNs = (w: Window): bigint => BigInt(Math.max(w.buckets.stepMs, 300_000)) * 1_000_000n;

function baseConditions(params: SqlParams, w: Window, metric: string, q: SeriesQuery, fromNs: bigint): string[] {
  return [
    `tenant_id = ${params.bind(w.tenantId, 'String')}`,
    `metric_name = ${params.bind(metric, 'String')}`,
    `timestamp >= fromUnixTimestamp64Nano(${params.bind(fromNs.toString(), 'Int64')})`,
    `timestamp < fromUnixTimestamp64Nano(${params.bind(w.endNs.toString(), 'Int64')})`,
    ...(q.attributes === undefined ? [] : matchAttributes(params, ['resource_attributes', 'scope_attributes', 'attributes'], q.attributes)),
  ];
}

/** A groupBy key's value: item attribute, else scope, else resource attribute ("" when absent). */
function groupExpression(params: SqlParams, key: string, index: number): string {
  const k = params.bind(key, 'String');
  const fallback = key === 'service.name' ? 'service_name' : "''";
  return `multiIf(mapContains(attributes, ${k}), attributes[${k}], mapContains(scope_attributes, ${k}), scope_attributes[${k}], mapContains(resource_attributes, ${k}), resource_attributes[${k}], ${fallback}) AS g${index}`;
}

/** Type, temporality and unit of each named metric seen in the window. */
export async function metricInfo(deps: RouteDeps, w: Window, names: readonly string[]): Promise<Result<Map<string, MetricInfo>>> {
  const params = new SqlParams();
  const sql = `SELECT metric_name, toString(metric_type) AS type, toString(any(temporality)) AS temporality, toUInt8(any(is_monotonic)) AS monotonic,
      any(unit) AS unit, any(description) AS description, count() AS n
    FROM ${queryTable(deps.schema, 'metrics')}
    WHERE tenant_id = ${params.bind(w.tenantId, 'String')} AND metric_name IN ${params.bind(names, 'Array(String)')}
      AND timestamp >= fromUnixTimestamp64Nano(${params.bind((w.startNs - lookbackNs(w) > 0n ? w.startNs - lookbackNs(w) : 0n).toString(), 'Int64')})
      AND timestamp < fromUnixTimestamp64Nano(${params.bind(w.endNs.toString(), 'Int64')})
    GROUP BY metric_name, metric_type ORDER BY metric_name, n DESC`;
  const rows = await deps.runner.rows<{ metric_name: string; type: MetricType; temporality: string; monotonic: number; unit: string; description: string }>(sql, params);
  if (!rows.ok) return rows;
  const out = new Map<string, MetricInfo>();
  for (const r of rows.value) {
    if (!out.has(r.metric_name)) out.set(r.metric_name, { name: r.metric_name, type: r.type, temporality: r.temporality, monotonic: r.monotonic === 1, unit: r.unit, description: r.description });
  }
  return ok(out);
}

const sqlAggregates: Partial<Record<Operator, string>> = {
  avg: 'avg(value)', sum: 'sum(value)', min: 'min(value)', max: 'max(value)', count: 'toFloat64(count())', last: 'argMax(value, timestamp)',
};

/** Whether gauges and sums answer this operator with one aggregating SELECT. */
const aggregatesInSql = (info: MetricInfo, op: Operator): boolean =>
  (info.type === 'gauge' || info.type === 'sum') && (sqlAggregates[op] !== undefined || quantileOf(op) !== undefined);

/** The aggregating SELECT of a gauge or sum (exported for the benchmark). */
export function aggregateSql(deps: RouteDeps, w: Window, info: MetricInfo, q: SeriesQuery, op: Operator): { sql: string; params: SqlParams } {
  const params = new SqlParams();
  const groups = (q.groupBy ?? []).map((k, i) => groupExpression(params, k, i));
  const quantile = quantileOf(op);
  const aggregate = quantile === undefined ? (sqlAggregates[op] ?? 'avg(value)') : `quantileExactInclusive(${params.bind(quantile, 'Float64')})(value)`;
  const bucket = `toInt32(intDiv(toUnixTimestamp64Milli(timestamp) - ${params.bind(w.buckets.originMs, 'Int64')}, ${params.bind(w.buckets.stepMs, 'Int64')})) AS b`;
  const where = baseConditions(params, w, info.name, q, w.startNs);
  const groupNames = groups.map((_, i) => `g${i}`);
  const sql = `SELECT ${[...groups, bucket, `${aggregate} AS v`].join(', ')}
    FROM ${queryTable(deps.schema, 'metrics')}
    WHERE ${where.join(' AND ')}
    GROUP BY ${[...groupNames, 'b'].join(', ')}`;
  return { sql, params };
}

/** The raw points of one metric, sorted by series, stream and time. */
function rawSql(deps: RouteDeps, w: Window, info: MetricInfo, q: SeriesQuery): { sql: string; params: SqlParams } {
  const params = new SqlParams();
  const groups = (q.groupBy ?? []).map((k, i) => groupExpression(params, k, i));
  const from = w.startNs - lookbackNs(w) > 0n ? w.startNs - lookbackNs(w) : 0n;
  const where = baseConditions(params, w, info.name, q, from);
  const sql = `SELECT ${[...groups, 'toString(cityHash64(resource_attributes, scope_attributes, attributes)) AS stream',
    // 64-bit integers become Float64 so both store modes return JSON numbers.
    'toFloat64(toUnixTimestamp64Milli(timestamp)) AS ms', 'toString(temporality) AS temporality', 'value', 'toFloat64(count) AS count', 'sum', 'min', 'max',
    'arrayMap(x -> toFloat64(x), bucket_counts) AS bucket_counts', 'explicit_bounds', 'exp_scale', 'toFloat64(exp_zero_count) AS exp_zero_count',
    'exp_positive_offset', 'arrayMap(x -> toFloat64(x), exp_positive_bucket_counts) AS exp_positive_bucket_counts',
    'exp_negative_offset', 'arrayMap(x -> toFloat64(x), exp_negative_bucket_counts) AS exp_negative_bucket_counts', 'quantiles', 'quantile_values'].join(', ')}
    FROM ${queryTable(deps.schema, 'metrics')}
    WHERE ${where.join(' AND ')}
    ORDER BY ${[...groups.map((_, i) => `g${i}`), 'stream', 'ms'].join(', ')}
    LIMIT ${params.bind(maxRawPoints + 1, 'UInt64')}`;
  return { sql, params };
}

type GroupRow = Readonly<Record<string, unknown>>;

const labelsOf = (row: GroupRow, groupBy: readonly string[]): Record<string, string> =>
  Object.fromEntries(groupBy.map((k, i) => { const v = row[`g${i}`]; return [k, typeof v === 'string' ? v : '']; }));

const keyOf = (row: GroupRow, groupBy: readonly string[]): string => JSON.stringify(groupBy.map((_, i) => row[`g${i}`] ?? ''));

const tooManySeries = (): Result<never> => fail(invalidRequest(`the query makes more than ${maxSeries} series: group by fewer attributes or filter`));

/** The series of one metric for one query object. */
export async function metricSeries(deps: RouteDeps, w: Window, info: MetricInfo, q: SeriesQuery, op: Operator): Promise<Result<SeriesData[]>> {
  const groupBy = q.groupBy ?? [];
  const emptyValue = op === 'count' ? 0 : null;
  if (aggregatesInSql(info, op)) {
    const { sql, params } = aggregateSql(deps, w, info, q, op);
    const rows = await deps.runner.rows<GroupRow & { b: number; v: number | null }>(sql, params);
    if (!rows.ok) return rows;
    const series = new Map<string, { labels: Record<string, string>; values: (number | null)[] }>();
    for (const row of rows.value) {
      const key = keyOf(row, groupBy);
      let s = series.get(key);
      if (s === undefined) {
        if (series.size >= maxSeries) return tooManySeries();
        s = { labels: labelsOf(row, groupBy), values: Array.from({ length: w.buckets.points }, () => emptyValue) };
        series.set(key, s);
      }
      const b = row.b;
      if (b >= 0 && b < s.values.length) s.values[b] = row.v === null || Number.isNaN(row.v) ? emptyValue : row.v;
    }
    return ok([...series.values()].map((s) => ({ metric: info, labels: s.labels, values: s.values })));
  }
  const { sql, params } = rawSql(deps, w, info, q);
  const rows = await deps.runner.rows<GroupRow & RawPoint>(sql, params);
  if (!rows.ok) return rows;
  if (rows.value.length > maxRawPoints) return fail(invalidRequest(`metric "${info.name}" has more than ${maxRawPoints} points in the range: narrow the range or filter`));
  const bySeries = new Map<string, { labels: Record<string, string>; points: RawPoint[] }>();
  for (const row of rows.value) {
    const key = keyOf(row, groupBy);
    let s = bySeries.get(key);
    if (s === undefined) {
      if (bySeries.size >= maxSeries) return tooManySeries();
      s = { labels: labelsOf(row, groupBy), points: [] };
      bySeries.set(key, s);
    }
    s.points.push(row);
  }
  const startMs = Number(w.startNs / 1_000_000n);
  const result: SeriesData[] = [];
  for (const s of bySeries.values()) {
    // Series seen only in the lookback have no point in the window: leave them out.
    if (!s.points.some((p) => p.ms >= startMs)) continue;
    result.push({ metric: info, labels: s.labels, values: seriesValues(info.type, op, s.points, w.buckets, startMs) });
  }
  return ok(result);
}
