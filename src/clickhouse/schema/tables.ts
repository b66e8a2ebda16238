// The tables of schema version 1. docs/schema.md explains every sort key.
// Migration 1 is built from these definitions and released migrations are
// checksummed, so they stay as released: later changes are migrations of
// their own (migration 3 changes codecs of logs and spans).
import type { RetentionConfig } from '../../config/config.ts';
import type { TableSpec } from './ddl.ts';

const attrs = 'Map(LowCardinality(String), String)';
const ts = 'DateTime64(9) CODEC(Delta(8), ZSTD(1))';

/** TTL expression of a signal table; retention.ts parses the days back out of engine_full. */
export function ttlExpression(column: string, days: number): string {
  return `toDateTime(${column}) + toIntervalDay(${days})`;
}

/** Bloom filters over attribute keys and values let `attributes` filters skip granules. */
function mapIndexes(column: string): string[] {
  return [
    `idx_${column}_keys mapKeys(${column}) TYPE bloom_filter(0.01) GRANULARITY 1`,
    `idx_${column}_values mapValues(${column}) TYPE bloom_filter(0.01) GRANULARITY 1`,
  ];
}

const signalSettings = ['index_granularity = 8192', 'ttl_only_drop_parts = 1'];

export function logsTable(retention: RetentionConfig): TableSpec {
  return {
    name: 'logs',
    columns: [
      'tenant_id LowCardinality(String)',
      `timestamp ${ts}`,
      `observed_timestamp ${ts}`,
      'log_id String CODEC(ZSTD(1))',
      'trace_id String CODEC(ZSTD(1))',
      'span_id String CODEC(ZSTD(1))',
      'trace_flags UInt8',
      'severity_number UInt8',
      'severity_text LowCardinality(String)',
      'service_name LowCardinality(String)',
      'event_name LowCardinality(String)',
      'body String CODEC(ZSTD(1))',
      'resource_schema_url LowCardinality(String)',
      `resource_attributes ${attrs} CODEC(ZSTD(1))`,
      'scope_name LowCardinality(String)',
      'scope_version LowCardinality(String)',
      'scope_schema_url LowCardinality(String)',
      `scope_attributes ${attrs} CODEC(ZSTD(1))`,
      `log_attributes ${attrs} CODEC(ZSTD(1))`,
      'dropped_attributes_count UInt32',
    ],
    indexes: [
      'idx_trace_id trace_id TYPE bloom_filter(0.001) GRANULARITY 1',
      ...mapIndexes('resource_attributes'),
      ...mapIndexes('log_attributes'),
    ],
    engine: 'MergeTree',
    partitionBy: 'toDate(timestamp)',
    orderBy: '(tenant_id, timestamp, log_id)',
    ttl: ttlExpression('timestamp', retention.logsDays),
    settings: signalSettings,
    shardingKey: 'rand()',
  };
}

export function spansTable(retention: RetentionConfig): TableSpec {
  return {
    name: 'spans',
    columns: [
      'tenant_id LowCardinality(String)',
      `timestamp ${ts}`,
      'trace_id String CODEC(ZSTD(1))',
      'span_id String CODEC(ZSTD(1))',
      'parent_span_id String CODEC(ZSTD(1))',
      'trace_state String CODEC(ZSTD(1))',
      'flags UInt32',
      'span_name LowCardinality(String)',
      "span_kind Enum8('UNSPECIFIED' = 0, 'INTERNAL' = 1, 'SERVER' = 2, 'CLIENT' = 3, 'PRODUCER' = 4, 'CONSUMER' = 5)",
      'service_name LowCardinality(String)',
      'duration_ns UInt64 CODEC(T64, ZSTD(1))',
      "status_code Enum8('UNSET' = 0, 'OK' = 1, 'ERROR' = 2)",
      'status_message String CODEC(ZSTD(1))',
      'resource_schema_url LowCardinality(String)',
      `resource_attributes ${attrs} CODEC(ZSTD(1))`,
      'scope_name LowCardinality(String)',
      'scope_version LowCardinality(String)',
      `scope_attributes ${attrs} CODEC(ZSTD(1))`,
      `span_attributes ${attrs} CODEC(ZSTD(1))`,
      'event_timestamps Array(DateTime64(9)) CODEC(ZSTD(1))',
      'event_names Array(LowCardinality(String)) CODEC(ZSTD(1))',
      `event_attributes Array(${attrs}) CODEC(ZSTD(1))`,
      'link_trace_ids Array(String) CODEC(ZSTD(1))',
      'link_span_ids Array(String) CODEC(ZSTD(1))',
      'link_trace_states Array(String) CODEC(ZSTD(1))',
      `link_attributes Array(${attrs}) CODEC(ZSTD(1))`,
      'dropped_attributes_count UInt32',
      'dropped_events_count UInt32',
      'dropped_links_count UInt32',
    ],
    indexes: [
      'idx_trace_id trace_id TYPE bloom_filter(0.001) GRANULARITY 1',
      'idx_duration duration_ns TYPE minmax GRANULARITY 1',
      ...mapIndexes('resource_attributes'),
      ...mapIndexes('span_attributes'),
    ],
    engine: 'MergeTree',
    partitionBy: 'toDate(timestamp)',
    orderBy: '(tenant_id, timestamp, trace_id, span_id)',
    ttl: ttlExpression('timestamp', retention.tracesDays),
    settings: signalSettings,
    shardingKey: 'rand()',
  };
}

export function metricsTable(retention: RetentionConfig): TableSpec {
  return {
    name: 'metrics',
    columns: [
      'tenant_id LowCardinality(String)',
      'metric_name LowCardinality(String)',
      "metric_type Enum8('gauge' = 1, 'sum' = 2, 'histogram' = 3, 'exponential_histogram' = 4, 'summary' = 5)",
      'description LowCardinality(String)',
      'unit LowCardinality(String)',
      "temporality Enum8('unspecified' = 0, 'delta' = 1, 'cumulative' = 2)",
      'is_monotonic Bool',
      'service_name LowCardinality(String)',
      'resource_schema_url LowCardinality(String)',
      `resource_attributes ${attrs} CODEC(ZSTD(1))`,
      'scope_name LowCardinality(String)',
      'scope_version LowCardinality(String)',
      `scope_attributes ${attrs} CODEC(ZSTD(1))`,
      `attributes ${attrs} CODEC(ZSTD(1))`,
      `start_timestamp ${ts}`,
      `timestamp ${ts}`,
      'flags UInt32',
      // gauge and sum
      'value Float64 CODEC(Gorilla, ZSTD(1))',
      // histogram, exponential histogram and summary
      'count UInt64 CODEC(T64, ZSTD(1))',
      'sum Float64 CODEC(Gorilla, ZSTD(1))',
      'min Nullable(Float64)',
      'max Nullable(Float64)',
      // histogram
      'bucket_counts Array(UInt64) CODEC(ZSTD(1))',
      'explicit_bounds Array(Float64) CODEC(ZSTD(1))',
      // exponential histogram
      'exp_scale Int32',
      'exp_zero_count UInt64',
      'exp_zero_threshold Float64',
      'exp_positive_offset Int32',
      'exp_positive_bucket_counts Array(UInt64) CODEC(ZSTD(1))',
      'exp_negative_offset Int32',
      'exp_negative_bucket_counts Array(UInt64) CODEC(ZSTD(1))',
      // summary
      'quantiles Array(Float64) CODEC(ZSTD(1))',
      'quantile_values Array(Float64) CODEC(ZSTD(1))',
    ],
    indexes: [...mapIndexes('attributes')],
    engine: 'MergeTree',
    partitionBy: 'toDate(timestamp)',
    orderBy: '(tenant_id, metric_name, timestamp)',
    ttl: ttlExpression('timestamp', retention.metricsDays),
    settings: signalSettings,
    shardingKey: 'rand()',
  };
}

/** One row per (tenant, UTC day of ingestion); SummingMergeTree adds rows up on merge. */
export const usageDailyTable: TableSpec = {
  name: 'usage_daily',
  columns: [
    'tenant_id String',
    'day Date',
    'log_records UInt64',
    'log_bytes UInt64',
    'spans UInt64',
    'metric_points UInt64',
  ],
  engine: 'SummingMergeTree((log_records, log_bytes, spans, metric_points))',
  orderBy: '(tenant_id, day)',
  shardingKey: 'cityHash64(tenant_id)',
};

/**
 * Tenants as aggregate states: discovery (materialized views on every signal
 * table) contributes first_seen and an empty name at version 0; a rename
 * contributes its name at the time it was made, so the newest rename wins
 * and discovery never overwrites a name.
 */
export const tenantsTable: TableSpec = {
  name: 'tenants',
  columns: [
    'tenant_id String',
    'first_seen SimpleAggregateFunction(min, DateTime64(3))',
    'name AggregateFunction(argMax, String, DateTime64(9))',
  ],
  engine: 'AggregatingMergeTree',
  orderBy: 'tenant_id',
  shardingKey: 'cityHash64(tenant_id)',
};

/** Bytes a log record counts for usage: UTF-8 body plus every attribute key and value. */
export const logBytesExpression = [
  'length(body)',
  ...['resource_attributes', 'scope_attributes', 'log_attributes'].flatMap((m) => [
    `arraySum(arrayMap(k -> length(k), mapKeys(${m})))`,
    `arraySum(arrayMap(v -> length(v), mapValues(${m})))`,
  ]),
].join(' + ');
