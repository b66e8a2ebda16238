// Versioned schema migrations. A migration is never edited once released:
// the migrator stores each one's checksum and refuses to run when an applied
// migration has changed. Add a new version instead.
import type { RetentionConfig } from '../../config/config.ts';
import {
  addFrontColumn,
  copyRows,
  createMaterializedView,
  createOrReplaceView,
  createTable,
  dropTable,
  exchangeTables,
  modifyCodecs,
  modifySettings,
  queryTable,
  storageTable,
} from './ddl.ts';
import type { ColumnCodec, SchemaTarget, TableSpec } from './ddl.ts';
import {
  logBytesExpression,
  logsTable,
  metricsTable,
  retentionColumn,
  retentionColumnType,
  retentionPartitionBy,
  retentionTables,
  retentionTtl,
  retentionView,
  retentionViewSelect,
  spansTable,
  tenantsTable,
  traceIndexSelect,
  traceIndexTable,
  usageDailyTable,
} from './tables.ts';
import type { RetentionTable } from './tables.ts';
import { recalculateOnlySetting } from './retention-ttl.ts';
import { deterministicShardingStatements } from './cluster-schema.ts';
import { metricSeriesSelect, metricSeriesSpec, metricSeriesTable, seriesIdColumn } from './metric-series.ts';

/** Parts of fewer rows than this are compact: just above the largest block the gateway inserts by default. */
const compactInsertedPartsSetting = 'min_rows_for_wide_part = 110000';

/**
 * Merges take about 12 parts of a size at once instead of 5, so a row is
 * rewritten log12 instead of log5 times on its way to a large part (ADR 6,
 * "Where the CPU went, fourth look": total CPU per span of the bench:peers
 * corpus 13.3–15.0 µs instead of 18.7–18.9, bytes at rest equal). A
 * partition holds more parts before they merge, each one of the newest.
 */
const widerMergesSetting = 'merge_selector_base = 12';

export interface SchemaContext extends SchemaTarget {
  readonly retention: RetentionConfig;
}

export interface Migration {
  readonly version: number;
  readonly name: string;
  statements(ctx: SchemaContext): string[];
}

const usageDay = "toDate(now(), 'UTC')";

/** Blocks a table remembers for deduplication: far more than the INSERTs a log can hold while ClickHouse is down. */
const dedupWindow = 10_000;

function usageView(ctx: SchemaContext, from: string, counts: { log_records: string; log_bytes: string; spans: string; metric_points: string }): string {
  return createMaterializedView(
    ctx,
    `${from}_usage_mv`,
    from,
    'usage_daily',
    `SELECT tenant_id, ${usageDay} AS day, ${counts.log_records} AS log_records, ${counts.log_bytes} AS log_bytes, ` +
      `${counts.spans} AS spans, ${counts.metric_points} AS metric_points FROM {from} GROUP BY tenant_id`,
  );
}

function discoveryView(ctx: SchemaContext, from: string): string {
  return createMaterializedView(
    ctx,
    `${from}_tenants_mv`,
    from,
    'tenants',
    "SELECT tenant_id, min(now64(3)) AS first_seen, argMaxState('', toDateTime64(0, 9)) AS name FROM {from} GROUP BY tenant_id",
  );
}

const attrs = 'Map(LowCardinality(String), String)';
const text = (column: string, codec: string): ColumnCodec => ({ column, type: 'String', codec });
const attributes = (column: string, codec: string): ColumnCodec => ({ column, type: attrs, codec });

/**
 * Migration 3's codecs (measured by `npm run bench:insert-cost`; docs/schema.md
 * has the figures). ZSTD(1) finds few of the repeats that attribute maps and
 * ids are made of; ZSTD(3) stores them in fewer bytes at no more CPU, and
 * ZSTD(6) on the maps finds the long repeats of resource and record
 * attributes. Event times within a span are close together: Delta first.
 */
const mapCodec = 'ZSTD(6)';
const textCodec = 'ZSTD(3)';

const logCodecs: readonly ColumnCodec[] = [
  ...['log_id', 'trace_id', 'span_id', 'body'].map((c) => text(c, textCodec)),
  ...['resource_attributes', 'scope_attributes', 'log_attributes'].map((c) => attributes(c, mapCodec)),
];

const spanCodecs: readonly ColumnCodec[] = [
  ...['trace_id', 'span_id', 'parent_span_id', 'trace_state', 'status_message'].map((c) => text(c, textCodec)),
  ...['resource_attributes', 'scope_attributes', 'span_attributes'].map((c) => attributes(c, mapCodec)),
  { column: 'event_timestamps', type: 'Array(DateTime64(9))', codec: `Delta(8), ${textCodec}` },
  { column: 'event_names', type: 'Array(LowCardinality(String))', codec: textCodec },
  { column: 'event_attributes', type: `Array(${attrs})`, codec: textCodec },
  ...['link_trace_ids', 'link_span_ids', 'link_trace_states'].map((column) => ({ column, type: 'Array(String)', codec: textCodec })),
  { column: 'link_attributes', type: `Array(${attrs})`, codec: textCodec },
];

/**
 * Span attributes at ZSTD(3) instead of migration 3's ZSTD(6): the largest
 * column of a span (6.8 of 14.0 B at rest), and the one whose compression
 * level the INSERT and the merges felt (ADR 6, "Where the CPU went, fifth
 * look": `npm run bench:insert-cost -- --only=spans`, INSERT CPU 0.86×,
 * merge CPU 0.81×, 14.0 → 18.0 B/span). The resource and scope maps keep
 * ZSTD(6): ZSTD(3) on them saved no CPU and lost their long repeats. Logs
 * keep ZSTD(6) too: their bytes at rest are only just under the bound
 * issue 19 sets (0.8× Loki's).
 */
const spanAttributesCodec = attributes('span_attributes', 'ZSTD(3)');

/**
 * Per-tenant settings (issue 13; src/tenant/settings/): one row per source,
 * tenant and field, the newest write wins. A NULL value unsets the field for
 * that source. Rows of one key share a shard, so reads may merge per shard.
 */
const tenantSettingsTable: TableSpec = {
  name: 'tenant_settings',
  columns: ['source LowCardinality(String)', 'tenant_id String', 'field LowCardinality(String)', 'value Nullable(Float64)', 'updated_at DateTime64(9)'],
  engine: 'ReplacingMergeTree(updated_at)',
  orderBy: '(source, tenant_id, field)',
  shardingKey: 'cityHash64(tenant_id)',
};

/** Gateway replicas heartbeat here; each counts the recent ones to take its share of a global limit. */
const gatewayReplicasTable: TableSpec = {
  name: 'gateway_replicas',
  columns: ['replica_id String', 'seen_at DateTime64(3)'],
  engine: 'ReplacingMergeTree(seen_at)',
  orderBy: 'replica_id',
  ttl: 'toDateTime(seen_at) + INTERVAL 1 DAY',
  shardingKey: 'cityHash64(replica_id)',
};

/** Items and bytes the gateway refused, per tenant, UTC day, signal and reason (summed on merge, like usage_daily). */
const usageRejectedDailyTable: TableSpec = {
  name: 'usage_rejected_daily',
  columns: ['tenant_id String', 'day Date', 'signal LowCardinality(String)', 'reason LowCardinality(String)', 'items UInt64', 'bytes UInt64'],
  engine: 'SummingMergeTree((items, bytes))',
  orderBy: '(tenant_id, day, signal, reason)',
  shardingKey: 'cityHash64(tenant_id)',
};

/**
 * Prometheus remote write metadata (issue 16; gateway/prometheus/): type,
 * help and unit per tenant and metric family as Prometheus sends them, the
 * newest write wins. Served by the PromQL API's /api/v1/metadata.
 */
const prometheusMetadataTable: TableSpec = {
  name: 'prometheus_metadata',
  columns: ['tenant_id String', 'metric_family String', 'type LowCardinality(String)', 'help String', 'unit String', 'updated_at DateTime64(9)'],
  engine: 'ReplacingMergeTree(updated_at)',
  orderBy: '(tenant_id, metric_family)',
  shardingKey: 'cityHash64(tenant_id)',
};

/** The column definition of migration 5's retention column; its default is the process default (what rows of other writers get). */
export function retentionColumnDefinition(days: number): string {
  return `${retentionColumn} ${retentionColumnType} DEFAULT ${days}`;
}

/** A signal table of schema version 1 as migrations 2 to 5 leave it, under `name`. */
function retentionSpec(ctx: SchemaContext, table: RetentionTable, name: string): TableSpec {
  const v1 = { logs: logsTable, spans: spansTable, metrics: metricsTable }[table](ctx.retention);
  const codecs = new Map({ logs: logCodecs, spans: spanCodecs, metrics: [] as readonly ColumnCodec[] }[table].map((c) => [c.column, c]));
  const field = retentionTables.find((r) => r.table === table)?.field ?? 'logsDays';
  const columns = v1.columns.flatMap((definition) => {
    const column = definition.slice(0, definition.indexOf(' '));
    const codec = codecs.get(column);
    const restated = codec === undefined ? definition : `${column} ${codec.type} CODEC(${codec.codec})`;
    return column === 'timestamp' ? [restated, retentionColumnDefinition(ctx.retention[field])] : [restated];
  });
  const settings = [...(v1.settings ?? []), ...(ctx.cluster === undefined ? [`non_replicated_deduplication_window = ${dedupWindow}`] : [])];
  return { ...v1, name, columns, partitionBy: retentionPartitionBy, ttl: retentionTtl, settings };
}

/**
 * Migration 5 for one signal table: a new table with the retention column in
 * its partition key, every row copied into it (the retention column takes
 * its default: the process default, which was the table's TTL), the two
 * swapped atomically, the old one dropped. Re-runnable from any statement:
 * the new table is dropped and rebuilt first. The views that read the table
 * (usage, discovery) follow its name; the copy does not feed them.
 */
function partitionByRetention(ctx: SchemaContext, table: RetentionTable): string[] {
  const next = `${table}_v5`;
  const spec = retentionSpec(ctx, table, next);
  const columns = { logs: logsTable, spans: spansTable, metrics: metricsTable }[table](ctx.retention).columns.map((c) => c.slice(0, c.indexOf(' ')));
  const retention = spec.columns.find((c) => c.startsWith(`${retentionColumn} `)) ?? '';
  return [
    ...dropTable(ctx, next),
    ...createTable(ctx, spec),
    copyRows(ctx, table, next, columns),
    exchangeTables(ctx, table, next),
    ...dropTable(ctx, next),
    ...addFrontColumn(ctx, table, `${retention} AFTER timestamp`),
  ];
}

export const migrations: readonly Migration[] = [
  {
    version: 1,
    name: 'signals, tenants and usage',
    statements: (ctx) => [
      ...createTable(ctx, logsTable(ctx.retention)),
      ...createTable(ctx, spansTable(ctx.retention)),
      ...createTable(ctx, metricsTable(ctx.retention)),
      ...createTable(ctx, usageDailyTable),
      ...createTable(ctx, tenantsTable),
      usageView(ctx, 'logs', { log_records: 'count()', log_bytes: `sum(${logBytesExpression})`, spans: '0', metric_points: '0' }),
      usageView(ctx, 'spans', { log_records: '0', log_bytes: '0', spans: 'count()', metric_points: '0' }),
      usageView(ctx, 'metrics', { log_records: '0', log_bytes: '0', spans: '0', metric_points: 'count()' }),
      discoveryView(ctx, 'logs'),
      discoveryView(ctx, 'spans'),
      discoveryView(ctx, 'metrics'),
    ],
  },
  {
    // The gateway's write-ahead log replays a block whose INSERT may already
    // have succeeded before a crash, with the same deduplication token
    // (docs/adr/0006-write-ahead-log.md). Replicated tables remember recent
    // blocks by default; plain MergeTree tables only with a window, and the
    // views' target tables need one too so usage and discovery do not count
    // a replayed block twice.
    version: 2,
    name: 'insert deduplication for write-ahead-log replays',
    statements: (ctx) =>
      ctx.cluster !== undefined
        ? []
        : ['logs', 'spans', 'metrics', 'usage_daily', 'tenants'].map((table) =>
            modifySettings(ctx, table, [`non_replicated_deduplication_window = ${dedupWindow}`]),
          ),
  },
  {
    // Bytes at rest per log and per span (issue 19). Codecs only: the
    // columns' types, and so every query, stay as they are; existing parts
    // take the new codecs as they are merged.
    version: 3,
    name: 'heavier codecs on attribute maps, ids, bodies and event times',
    statements: (ctx) => [modifyCodecs(ctx, 'logs', logCodecs), modifyCodecs(ctx, 'spans', spanCodecs)],
  },
  {
    // Per-tenant limits and retention (issue 13): the settings every
    // replica reads, the gateway replicas that share a global ingest limit,
    // and the units refused per tenant for usage.
    version: 4,
    name: 'tenant settings, gateway replicas and rejected usage',
    statements: (ctx) => [...createTable(ctx, tenantSettingsTable), ...createTable(ctx, gatewayReplicasTable), ...createTable(ctx, usageRejectedDailyTable)],
  },
  {
    // Retention per tenant and signal (issue 13; docs/schema.md,
    // "Retention"): rows carry their retention, partitions hold one
    // retention and one day, the TTL drops whole parts. The view resolves
    // each tenant's days for the INSERTs (src/clickhouse/row-binary-insert.ts).
    version: 5,
    name: 'retention per tenant and signal: retention_days in the partition key',
    statements: (ctx) => [
      createOrReplaceView(ctx, retentionView, retentionViewSelect(queryTable(ctx, 'tenant_settings'), ctx.retention)),
      ...retentionTables.flatMap((r) => partitionByRetention(ctx, r.table)),
    ],
  },
  {
    // Prometheus remote write (issue 16): samples go to the metrics table;
    // the metadata Prometheus sends per metric family is kept here.
    version: 6,
    name: 'prometheus remote write metadata',
    statements: (ctx) => createTable(ctx, prometheusMetadataTable),
  },
  {
    // Raising retention keeps stored rows (issue 14; docs/schema.md,
    // "Raising retention"): MATERIALIZE TTL recomputes the parts' TTL
    // information only, without rewriting them, so the migrator and the
    // settings writer can give the TTL each tenant's current days
    // (src/clickhouse/schema/retention-ttl.ts).
    version: 7,
    name: 'signal tables recompute TTL information only on MATERIALIZE TTL',
    statements: (ctx) => retentionTables.map((r) => modifySettings(ctx, r.table, [recalculateOnlySetting])),
  },
  {
    // Tempo's trace by id (issue 17; tables.ts traceIndexTable): the time
    // range of every trace, so a lookup reads the trace's own granules
    // only. Spans stored before the view are indexed once here.
    version: 8,
    name: 'trace index: time range per tenant and trace',
    statements: (ctx) => [
      ...createTable(ctx, traceIndexTable),
      createMaterializedView(ctx, 'spans_trace_index_mv', 'spans', 'trace_index', traceIndexSelect),
      `INSERT INTO ${queryTable(ctx, 'trace_index')} ${traceIndexSelect.replace('{from}', queryTable(ctx, 'spans'))}`,
    ],
  },
  {
    // A retried block loses no rows on a cluster (issue 14; docs/schema.md,
    // "Sharding"): the Distributed fronts shard by a function of the row
    // (tables.ts shardingKeys) instead of rand(), so the write-ahead log's
    // retry under the same deduplication token gives each shard the rows the
    // first try gave it. Cluster only: one node has no fronts.
    version: 9,
    name: 'deterministic sharding keys for the signal tables',
    statements: (ctx) => deterministicShardingStatements(ctx),
  },
  {
    // The write path's CPU (issue 19; docs/adr/0006-write-ahead-log.md):
    // a part the gateway inserts (a write-ahead-log segment, at most
    // TENANTRY_BATCH_MAX_ROWS = 100,000 rows) is written in the compact
    // format, a few files instead of one or two per column and substream
    // (178 for spans), whose creation was a third of an INSERT's CPU.
    // Merged parts past the bound are wide, as before, so reads and bytes
    // at rest stay as they were (`npm run bench:insert-cost`).
    version: 10,
    name: 'inserted parts of the signal tables in the compact format',
    statements: (ctx) => retentionTables.map((r) => modifySettings(ctx, r.table, [compactInsertedPartsSetting])),
  },
  {
    version: 11,
    name: 'wider merges of the signal tables',
    statements: (ctx) => retentionTables.map((r) => modifySettings(ctx, r.table, [widerMergesSetting])),
  },
  {
    version: 12,
    name: 'span attributes at a lighter codec',
    statements: (ctx) => [modifyCodecs(ctx, 'spans', [spanAttributesCodec])],
  },
  {
    // The PromQL engine's series index (issue 34; metric-series.ts): one row
    // per tenant, day and stored series, fed at ingest, so a selector's
    // series are resolved without grouping samples. Series stored before
    // the view are indexed once here.
    version: 13,
    name: 'prometheus series index per tenant and day',
    statements: (ctx) => [
      ...createTable(ctx, metricSeriesSpec),
      createMaterializedView(ctx, 'metrics_series_mv', 'metrics', metricSeriesTable, metricSeriesSelect),
      `INSERT INTO ${queryTable(ctx, metricSeriesTable)} ${metricSeriesSelect.replace('{from}', queryTable(ctx, 'metrics'))}`,
    ],
  },
  {
    // Each metrics row's series id, computed once at insert (metric-series.ts,
    // seriesIdColumn): the sample reader filters on it instead of hashing
    // every row's maps and arrays per query (measured on 720k rows: 17 ms
    // against 600 ms). Metadata only: parts written before it compute the
    // id when read, until a merge writes it.
    version: 14,
    name: 'metrics rows carry their series id',
    statements: (ctx) => [
      `ALTER TABLE ${storageTable(ctx, 'metrics')}${ctx.cluster === undefined ? '' : ` ON CLUSTER ${ctx.cluster}`} ADD COLUMN IF NOT EXISTS ${seriesIdColumn}`,
      ...addFrontColumn(ctx, 'metrics', seriesIdColumn),
    ],
  },
];
