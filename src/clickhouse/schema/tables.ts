// The tables of schema version 1. docs/schema.md explains every sort key.
// Migration 1 is built from these definitions and released migrations are
// checksummed, so they stay as released: later changes are migrations of
// their own (migration 3 changes codecs of logs and spans; migration 5 adds
// per-tenant retention, built from the definitions at the end of this file).
import type { RetentionConfig } from '../../config/config.ts';
import type { TableSpec } from './ddl.ts';

const attrs = 'Map(LowCardinality(String), String)';
const ts = 'DateTime64(9) CODEC(Delta(8), ZSTD(1))';

/** TTL expression of a signal table before migration 5; the migrator parses the days back out of engine_full. */
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

/**
 * Sharding keys of the signal tables' Distributed fronts (migration 9;
 * docs/schema.md, "Sharding"). Each is a function of the row alone, never
 * rand(): the gateway's write-ahead log retries a failed block with the same
 * insert_deduplication_token, every shard's part of the INSERT carries that
 * token, and a shard drops any block under a token it already stored, so a
 * retry must give every shard exactly the rows the first try gave it.
 * retention_days is left out: it is read from the settings at each INSERT.
 * Migrations 1 and 5 render their fronts from these as well; a cluster that
 * ran them with rand() gets these keys from migration 9.
 */
export const shardingKeys = {
  // log_id is unique per record (log.record.uid or the gateway's id); the time spreads records without one.
  logs: 'cityHash64(log_id, timestamp)',
  // A trace on one shard; trace ids are random, so traces spread evenly.
  spans: 'cityHash64(trace_id)',
  // A point of a series at a time: the series (name, resource, attributes) with its timestamp.
  metrics: 'cityHash64(metric_name, resource_attributes, attributes, timestamp)',
  // Fed per shard by spans' view; a trace's rows then meet on the trace's shard.
  traceIndex: 'cityHash64(trace_id)',
} as const;

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
    indexes: ['idx_trace_id trace_id TYPE bloom_filter(0.001) GRANULARITY 1', ...mapIndexes('resource_attributes'), ...mapIndexes('log_attributes')],
    engine: 'MergeTree',
    partitionBy: 'toDate(timestamp)',
    orderBy: '(tenant_id, timestamp, log_id)',
    ttl: ttlExpression('timestamp', retention.logsDays),
    settings: signalSettings,
    shardingKey: shardingKeys.logs,
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
    shardingKey: shardingKeys.spans,
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
    shardingKey: shardingKeys.metrics,
  };
}

/** One row per (tenant, UTC day of ingestion); SummingMergeTree adds rows up on merge. */
export const usageDailyTable: TableSpec = {
  name: 'usage_daily',
  columns: ['tenant_id String', 'day Date', 'log_records UInt64', 'log_bytes UInt64', 'spans UInt64', 'metric_points UInt64'],
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
  columns: ['tenant_id String', 'first_seen SimpleAggregateFunction(min, DateTime64(3))', 'name AggregateFunction(argMax, String, DateTime64(9))'],
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

/** The signal tables and the retention field that applies to each (src/tenant/settings/). */
export const retentionTables = [
  { table: 'logs', field: 'logsDays', column: 'logs_days' },
  { table: 'spans', field: 'tracesDays', column: 'traces_days' },
  { table: 'metrics', field: 'metricsDays', column: 'metrics_days' },
] as const;
export type RetentionTable = (typeof retentionTables)[number]['table'];

/** The column of a signal table (migration 5) holding the days its row is kept. */
export const retentionColumn = 'retention_days';
export const retentionColumnType = 'UInt16';

/** The view (migration 5) giving each configured tenant's retention per signal, and the '' row for everyone else. */
export const retentionView = 'tenant_retention';

/**
 * Partitions of a signal table from migration 5: rows of one retention and
 * one UTC day share a partition, so every row of a part expires at once and
 * `ttl_only_drop_parts` drops whole parts (docs/schema.md, "Retention").
 */
export const retentionPartitionBy = `(${retentionColumn}, toDate(timestamp))`;

/** TTL of a signal table from migration 5: each row after its own retention, at least that many days after its time. */
export const retentionTtl = `toDateTime(timestamp) + toIntervalDay(${retentionColumn})`;

/**
 * The view's SELECT: per tenant with a stored setting, the days of each
 * signal resolved as src/tenant/settings/tenant-settings.ts resolves them
 * (source 'tenant', then 'api', then the stack's defaults, then the process
 * defaults `defaults`), and one row with tenant_id '' for every other tenant
 * (stack, then process defaults). The newest write of a (source, tenant,
 * field) wins; its NULL value unsets the field (argMax over a tuple keeps
 * NULLs, which argMax over the value would skip).
 */
export function retentionViewSelect(settingsTable: string, defaults: RetentionConfig): string {
  const fields = retentionTables.map((r) => `'retention.${r.field}'`).join(', ');
  const pick = (source: string, field: string): string => `anyIf(value, source = '${source}' AND field = 'retention.${field}')`;
  const stack = retentionTables.map((r) => `${pick('stack', r.field)} AS stack_${r.column}`).join(', ');
  const perTenant = retentionTables
    .map((r) => `toUInt16(coalesce(${pick('tenant', r.field)}, ${pick('api', r.field)}, any(stack_${r.column}), ${defaults[r.field]})) AS ${r.column}`)
    .join(',\n    ');
  const everyone = retentionTables.map((r) => `toUInt16(coalesce(stack_${r.column}, ${defaults[r.field]})) AS ${r.column}`).join(', ');
  return [
    'WITH',
    `  latest AS (SELECT source, tenant_id, field, argMax(tuple(value), updated_at).1 AS value FROM ${settingsTable} WHERE field IN (${fields}) GROUP BY source, tenant_id, field),`,
    `  stack AS (SELECT ${stack} FROM latest WHERE source = 'stack' AND tenant_id = '')`,
    'SELECT tenant_id,',
    `    ${perTenant}`,
    "FROM latest CROSS JOIN stack WHERE source IN ('tenant', 'api') AND tenant_id != '' GROUP BY tenant_id",
    'UNION ALL',
    `SELECT '' AS tenant_id, ${everyone} FROM stack`,
  ].join('\n');
}

/**
 * The value of a row's retention column at INSERT: its tenant's days from
 * the view, else the '' row's. The view is read once per INSERT (a scalar
 * under `with`), so a changed setting applies from the next INSERT on.
 * `tenant` is the expression of the row's tenant id as a String.
 */
export function retentionDaysAtInsert(view: string, column: string, tenant: string): { readonly with: string; readonly expression: string } {
  return {
    with: `(SELECT (groupArrayIf(tenant_id, tenant_id != ''), groupArrayIf(${column}, tenant_id != ''), anyIf(${column}, tenant_id = '')) FROM ${view}) AS retention_lookup`,
    expression: `transform(${tenant}, tupleElement(retention_lookup, 1), tupleElement(retention_lookup, 2), tupleElement(retention_lookup, 3))`,
  };
}

/**
 * Migration 8 (Tempo trace by id): per tenant and trace, the time range of
 * its spans and the longest retention among them, fed by a materialized
 * view on spans. Sorted by (tenant_id, trace_id), a lookup reads one
 * granule and narrows the spans query to the trace's own time range, so it
 * never reads the bloom filters of a tenant's whole window. Rows of one
 * trace merge into one (min, max); until they do, readers take min and max.
 */
export const traceIndexTable: TableSpec = {
  name: 'trace_index',
  columns: [
    'tenant_id LowCardinality(String)',
    'trace_id String CODEC(ZSTD(3))',
    'first_seen SimpleAggregateFunction(min, DateTime64(9))',
    'last_seen SimpleAggregateFunction(max, DateTime64(9))',
    // Named apart from the signal tables' retention_days: the migrator and the settings writer manage those.
    `keep_days SimpleAggregateFunction(max, ${retentionColumnType})`,
  ],
  engine: 'AggregatingMergeTree',
  orderBy: '(tenant_id, trace_id)',
  ttl: 'toDateTime(last_seen) + toIntervalDay(keep_days)',
  shardingKey: shardingKeys.traceIndex,
};

/** The materialized view's SELECT feeding trace_index from each block inserted into spans. */
export const traceIndexSelect = `SELECT tenant_id, trace_id, min(timestamp) AS first_seen, max(timestamp) AS last_seen, max(${retentionColumn}) AS keep_days FROM {from} GROUP BY tenant_id, trace_id`;
