// Migration 13 (issue 34): the Prometheus series index. One row per tenant,
// UTC day and stored series, fed at ingest by a materialized view on
// metrics, so the PromQL engine resolves a selector's series from a few
// rows per series instead of grouping raw samples. A stored series is what
// decides a Prometheus label set (api/compat/prometheus/series-names.ts):
// metric name, type, unit, temporality, monotonicity, the remote-write
// flag, the resource attributes job and instance come from, the point's
// attributes, and the histogram bounds or summary quantiles (their le and
// quantile labels). Its id is a hash of exactly those columns, computed the
// same way here and by the sample reader over the metrics rows
// (seriesIdExpression), so samples are read by id without a column of
// their own. Released with migration 13: changing the expression needs a
// new migration (and a new table), never an edit.
import { instanceAttribute, jobAttribute, remoteWriteScope } from '../../prometheus/remote-write-scope.ts';
import { quoted } from '../inline-params.ts';
import type { TableSpec } from './ddl.ts';
import { retentionColumn, retentionColumnType } from './tables.ts';

/** The index table's name. */
export const metricSeriesTable = 'metric_series';

/** The resource attribute that prefixes `job` for OTLP series (`namespace/name`). */
export const namespaceAttribute = 'service.namespace';

/**
 * The id of a metrics row's series, as SQL over the metrics table's columns
 * (a code constant: no user value in it).
 */
export const seriesIdExpression = [
  'cityHash64(metric_name, toUInt8(metric_type), unit, toUInt8(temporality), is_monotonic',
  `scope_name = ${quoted(remoteWriteScope.name)}`,
  `resource_attributes[${quoted(jobAttribute)}]`,
  `resource_attributes[${quoted(namespaceAttribute)}]`,
  `resource_attributes[${quoted(instanceAttribute)}]`,
  'attributes, explicit_bounds, quantiles)',
].join(', ');

/** Migration 14: the metrics table's column holding each row's series id, computed at insert. */
export const seriesIdColumn = `series_id UInt64 MATERIALIZED ${seriesIdExpression}`;

const metricType = "Enum8('gauge' = 1, 'sum' = 2, 'histogram' = 3, 'exponential_histogram' = 4, 'summary' = 5)";
const temporality = "Enum8('unspecified' = 0, 'delta' = 1, 'cumulative' = 2)";

/**
 * Sorted by (tenant_id, day, series_id): a tenant's series within its
 * retention are one contiguous range. Rows of one (tenant, day, series)
 * merge into one; until they do, readers group by series_id. The identity
 * columns are functions of series_id, so the merge's `any` among equal
 * values is exact. `first_inserted` (the earliest insert of the
 * series on that day) lets a reader fetch only what appeared since its last
 * look; `keep_days` is the longest retention among the series' rows, and
 * the TTL drops a row the day after the day's rows expire. `any` returns
 * no LowCardinality, so those columns are plain (the table is small).
 */
export const metricSeriesSpec: TableSpec = {
  name: metricSeriesTable,
  columns: [
    'tenant_id LowCardinality(String)',
    'day Date',
    'series_id UInt64',
    ...[
      'metric_name String',
      `metric_type ${metricType}`,
      'unit String',
      `temporality ${temporality}`,
      'is_monotonic Bool',
      'remote_write Bool',
      'job_name String',
      'job_namespace String',
      'instance String',
      'attributes Map(String, String)',
      'explicit_bounds Array(Float64)',
      'quantiles Array(Float64)',
    ].map((c) => `${c.slice(0, c.indexOf(' '))} SimpleAggregateFunction(any, ${c.slice(c.indexOf(' ') + 1)})`),
    'first_inserted SimpleAggregateFunction(min, DateTime64(3))',
    `keep_days SimpleAggregateFunction(max, ${retentionColumnType})`,
  ],
  engine: 'AggregatingMergeTree',
  orderBy: '(tenant_id, day, series_id)',
  ttl: 'toDateTime(day) + toIntervalDay(keep_days + 1)',
  shardingKey: 'cityHash64(tenant_id, series_id)',
};

/** The materialized view's SELECT feeding metric_series from each block inserted into metrics (`{from}`: the metrics table). */
export const metricSeriesSelect = [
  'SELECT tenant_id, day, series_id, any(m) AS metric_name, any(mt) AS metric_type, any(u) AS unit, any(tp) AS temporality,',
  '  any(mono) AS is_monotonic, any(rw) AS remote_write, any(job) AS job_name, any(ns) AS job_namespace, any(inst) AS instance,',
  '  any(attrs) AS attributes, any(bounds) AS explicit_bounds, any(qs) AS quantiles,',
  `  min(now64(3)) AS first_inserted, max(${retentionColumn}) AS keep_days`,
  'FROM (SELECT tenant_id, toDate(timestamp) AS day, metric_name AS m, metric_type AS mt, unit AS u, temporality AS tp, is_monotonic AS mono,',
  `    scope_name = ${quoted(remoteWriteScope.name)} AS rw, resource_attributes[${quoted(jobAttribute)}] AS job,`,
  `    resource_attributes[${quoted(namespaceAttribute)}] AS ns, resource_attributes[${quoted(instanceAttribute)}] AS inst,`,
  `    attributes AS attrs, explicit_bounds AS bounds, quantiles AS qs, ${retentionColumn}, ${seriesIdExpression} AS series_id FROM {from})`,
  'GROUP BY tenant_id, day, series_id',
].join('\n');
