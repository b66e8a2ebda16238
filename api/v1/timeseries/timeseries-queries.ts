// The timeseries query, per metric: one aggregating SELECT for gauges and
// sums (avg, sum, min, max, count, last, percentiles of raw values), or the
// raw points of the window folded by series-math (rates, increases,
// histograms, summaries). Both carry the metric's type, temporality and unit,
// so no separate metadata query is needed; a plain operator that meets a
// histogram or summary falls back to the raw points.
import { queryTable } from '../../../src/clickhouse/schema/ddl.ts';
import type { Result } from '../../../src/result.ts';
import { fail, ok } from '../../../src/result.ts';
import type { ApiError } from '../../http/api-error.ts';
import { invalidRequest } from '../../http/api-error.ts';
import { matchAttributes } from '../query/filters.ts';
import type { SqlParams } from '../../query/sql-params.ts';
import type { ScanStatement, Statement, TenantScan } from '../../query/tenant-scan.ts';
import type { RouteDeps } from '../../query/deps.ts';
import type { BucketPlan } from './bucket-plan.ts';
import { quantileOf, seriesValues } from './series-math.ts';
import type { MetricType, RawPoint } from './series-math.ts';
import type { Operator, SeriesQuery } from './timeseries-codecs.ts';
import { staleMarkerBits } from '../../../src/prometheus/remote-write-scope.ts';

export interface Window {
  /** The tenant's metrics: every range read goes through its window. */
  readonly scan: TenantScan;
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

/** The conditions of one metric's rows from `wantedFromNs` (at most `graceNs` before the checked window) to the window's end. */
function baseConditions(statement: ScanStatement, w: Window, metric: string, q: SeriesQuery, wantedFromNs: bigint, graceNs = 0n): Result<string[], ApiError> {
  const read = w.scan.window({ startNs: wantedFromNs, endNs: w.endNs }, { graceNs });
  if (!read.ok) return read;
  const { params } = statement;
  return ok([
    statement.tenantIs(),
    `metric_name = ${params.bind(metric, 'String')}`,
    `timestamp >= fromUnixTimestamp64Nano(${params.bind(read.value.startNs.toString(), 'Int64')})`,
    `timestamp < fromUnixTimestamp64Nano(${params.bind(read.value.endNs.toString(), 'Int64')})`,
    ...(q.attributes === undefined ? [] : matchAttributes(params, ['resource_attributes', 'scope_attributes', 'attributes'], q.attributes)),
    // Prometheus' staleness markers end a remote-written series; they are no value.
    `reinterpretAsUInt64(value) != ${staleMarkerBits}`,
  ]);
}

/** A groupBy key's value: item attribute, else scope, else resource attribute ("" when absent). */
function groupExpression(params: SqlParams, key: string, index: number): string {
  const k = params.bind(key, 'String');
  const fallback = key === 'service.name' ? 'service_name' : "''";
  return `multiIf(mapContains(attributes, ${k}), attributes[${k}], mapContains(scope_attributes, ${k}), scope_attributes[${k}], mapContains(resource_attributes, ${k}), resource_attributes[${k}], ${fallback}) AS g${index}`;
}

const sqlAggregates: Partial<Record<Operator, string>> = {
  avg: 'avg(value)',
  sum: 'sum(value)',
  min: 'min(value)',
  max: 'max(value)',
  count: 'toFloat64(count())',
  last: 'argMax(value, timestamp)',
};

/** Whether gauges and sums answer this operator with one aggregating SELECT. */
const aggregatesInSql = (op: Operator): boolean => sqlAggregates[op] !== undefined || quantileOf(op) !== undefined;

/** Columns describing the metric, per raw row. */
const infoColumns = ['toString(metric_type) AS type', 'toString(temporality) AS temporality', 'toUInt8(is_monotonic) AS monotonic', 'unit', 'description'];

/**
 * The same description, aggregated once per group as one tuple: one aggregate
 * instead of five, and enums and booleans as JSON renders them. Reading these
 * five columns is most of what the aggregating SELECT costs beyond the values.
 */
const infoTuple = 'any((metric_type, temporality, is_monotonic, unit, description)) AS info';

interface InfoRow {
  type: MetricType;
  temporality: string;
  monotonic: number;
  unit: string;
  description: string;
}

/** The info tuple as JSON: an array, or an object keyed by column where the server names tuple elements. */
type InfoTuple = readonly [MetricType, string, boolean, string, string] | Readonly<Record<string, string | boolean>>;

const infoOf = (name: string, r: InfoRow): MetricInfo => ({
  name,
  type: r.type,
  temporality: r.temporality,
  monotonic: r.monotonic === 1,
  unit: r.unit,
  description: r.description,
});

/** The metric type of an aggregated info tuple (its first element). */
const typeOfTuple = (tuple: InfoTuple): unknown => (Array.isArray(tuple) ? tuple[0] : Object.values(tuple)[0]);

/** Reads an aggregated info tuple. */
export function infoOfTuple(name: string, tuple: InfoTuple): MetricInfo {
  const [type, temporality, monotonic, unit, description] = (Array.isArray(tuple) ? tuple : Object.values(tuple)) as [
    MetricType,
    string,
    boolean,
    string,
    string,
  ];
  return { name, type, temporality, monotonic, unit, description };
}

/** The aggregating SELECT of a gauge or sum. */
function aggregateSql(deps: RouteDeps, w: Window, metric: string, q: SeriesQuery, op: Operator): Result<Statement, ApiError> {
  const statement = w.scan.statement();
  const { params } = statement;
  const groups = (q.groupBy ?? []).map((k, i) => groupExpression(params, k, i));
  const quantile = quantileOf(op);
  const aggregate = quantile === undefined ? (sqlAggregates[op] ?? 'avg(value)') : `quantileExactInclusive(${params.bind(quantile, 'Float64')})(value)`;
  // Int64: a JSON number from the embedded store, a quoted one from a server; Number() reads both.
  const bucket = `intDiv(toUnixTimestamp64Milli(timestamp) - ${params.bind(w.buckets.originMs, 'Int64')}, ${params.bind(w.buckets.stepMs, 'Int64')}) AS b`;
  const where = baseConditions(statement, w, metric, q, w.startNs);
  if (!where.ok) return where;
  const groupNames = groups.map((_, i) => `g${i}`);
  return ok(
    statement.finish(`SELECT ${[...groups, bucket, `${aggregate} AS v`, infoTuple].join(', ')}
    FROM ${queryTable(deps.schema, 'metrics')}
    WHERE ${where.value.join(' AND ')}
    GROUP BY ${[...groupNames, 'b'].join(', ')}`),
  );
}

/** The raw points of one metric, sorted by series, stream and time. */
function rawSql(deps: RouteDeps, w: Window, metric: string, q: SeriesQuery): Result<Statement, ApiError> {
  const statement = w.scan.statement();
  const { params } = statement;
  const groups = (q.groupBy ?? []).map((k, i) => groupExpression(params, k, i));
  const from = w.startNs - lookbackNs(w) > 0n ? w.startNs - lookbackNs(w) : 0n;
  const where = baseConditions(statement, w, metric, q, from, w.startNs - from);
  if (!where.ok) return where;
  return ok(
    statement.finish(`SELECT ${[
      ...groups,
      ...infoColumns,
      'toString(cityHash64(resource_attributes, scope_attributes, attributes)) AS stream',
      // 64-bit integers become Float64 so both store modes return JSON numbers.
      'toFloat64(toUnixTimestamp64Milli(timestamp)) AS ms',
      'value',
      'toFloat64(count) AS count',
      'sum',
      'min',
      'max',
      'arrayMap(x -> toFloat64(x), bucket_counts) AS bucket_counts',
      'explicit_bounds',
      'exp_scale',
      'toFloat64(exp_zero_count) AS exp_zero_count',
      'exp_positive_offset',
      'arrayMap(x -> toFloat64(x), exp_positive_bucket_counts) AS exp_positive_bucket_counts',
      'exp_negative_offset',
      'arrayMap(x -> toFloat64(x), exp_negative_bucket_counts) AS exp_negative_bucket_counts',
      'quantiles',
      'quantile_values',
    ].join(', ')}
    FROM ${queryTable(deps.schema, 'metrics')}
    WHERE ${where.value.join(' AND ')}
    ORDER BY ${[...groups.map((_, i) => `g${i}`), 'stream', 'ms'].join(', ')}
    LIMIT ${params.bind(maxRawPoints + 1, 'UInt64')}`),
  );
}

type GroupRow = Readonly<Record<string, unknown>>;

const labelsOf = (row: GroupRow, groupBy: readonly string[]): Record<string, string> =>
  Object.fromEntries(
    groupBy.map((k, i) => {
      const v = row[`g${i}`];
      return [k, typeof v === 'string' ? v : ''];
    }),
  );

/** The series a row belongs to: its group values (no JSON for the common single group). */
const keyOf = (row: GroupRow, groupBy: readonly string[]): string =>
  groupBy.length === 1 ? (typeof row['g0'] === 'string' ? row['g0'] : '') : JSON.stringify(groupBy.map((_, i) => row[`g${i}`] ?? ''));

const tooManySeries = (): Result<never, ApiError> => fail(invalidRequest(`the query makes more than ${maxSeries} series: group by fewer attributes or filter`));

/** The series of one metric for one query object (none when the metric has no data in the window). */
export async function metricSeries(deps: RouteDeps, w: Window, metric: string, q: SeriesQuery, op: Operator): Promise<Result<SeriesData[], ApiError>> {
  const groupBy = q.groupBy ?? [];
  const emptyValue = op === 'count' ? 0 : null;
  if (aggregatesInSql(op)) {
    const statement = aggregateSql(deps, w, metric, q, op);
    if (!statement.ok) return statement;
    const rows = await deps.runner.rows<GroupRow & { b: number | string; v: number | null; info: InfoTuple }>(statement.value);
    if (!rows.ok) return rows;
    const first = rows.value[0];
    if (first === undefined) return ok([]);
    if (
      rows.value.every((r) => {
        const type = typeOfTuple(r.info);
        return type === 'gauge' || type === 'sum';
      })
    ) {
      const info = infoOfTuple(metric, first.info);
      const series = new Map<string, { labels: Record<string, string>; values: (number | null)[] }>();
      for (const row of rows.value) {
        const key = keyOf(row, groupBy);
        let s = series.get(key);
        if (s === undefined) {
          if (series.size >= maxSeries) return tooManySeries();
          s = { labels: labelsOf(row, groupBy), values: Array.from({ length: w.buckets.points }, () => emptyValue) };
          series.set(key, s);
        }
        const b = Number(row.b);
        if (b >= 0 && b < s.values.length) s.values[b] = row.v === null || Number.isNaN(row.v) ? emptyValue : row.v;
      }
      return ok([...series.values()].map((s) => ({ metric: info, labels: s.labels, values: s.values })));
    }
  }
  const statement = rawSql(deps, w, metric, q);
  if (!statement.ok) return statement;
  const rows = await deps.runner.manyRows<GroupRow & InfoRow & RawPoint>(statement.value);
  if (!rows.ok) return rows;
  if (rows.value.length > maxRawPoints)
    return fail(invalidRequest(`metric "${metric}" has more than ${maxRawPoints} points in the range: narrow the range or filter`));
  const startMs = Number(w.startNs / 1_000_000n);
  // The newest point in the window names the metric's type and unit.
  const newest = rows.value.reduce<(InfoRow & RawPoint) | undefined>((a, r) => (r.ms >= startMs && (a === undefined || r.ms > a.ms) ? r : a), undefined);
  if (newest === undefined) return ok([]);
  const info = infoOf(metric, newest);
  const bySeries = new Map<string, { labels: Record<string, string>; points: RawPoint[] }>();
  for (const row of rows.value) {
    if (row.type !== info.type) continue;
    const key = keyOf(row, groupBy);
    let s = bySeries.get(key);
    if (s === undefined) {
      if (bySeries.size >= maxSeries) return tooManySeries();
      s = { labels: labelsOf(row, groupBy), points: [] };
      bySeries.set(key, s);
    }
    s.points.push(row);
  }
  const result: SeriesData[] = [];
  for (const s of bySeries.values()) {
    // Series seen only in the lookback have no point in the window: leave them out.
    if (!s.points.some((p) => p.ms >= startMs)) continue;
    result.push({ metric: info, labels: s.labels, values: seriesValues(info.type, op, s.points, w.buckets, startMs) });
  }
  return ok(result);
}
