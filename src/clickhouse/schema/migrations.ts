// Versioned schema migrations. A migration is never edited once released:
// the migrator stores each one's checksum and refuses to run when an applied
// migration has changed. Add a new version instead.
import type { RetentionConfig } from '../../config/config.ts';
import { createMaterializedView, createTable, modifySettings } from './ddl.ts';
import type { SchemaTarget } from './ddl.ts';
import { logBytesExpression, logsTable, metricsTable, spansTable, tenantsTable, usageDailyTable } from './tables.ts';

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
  return createMaterializedView(ctx, `${from}_usage_mv`, from, 'usage_daily',
    `SELECT tenant_id, ${usageDay} AS day, ${counts.log_records} AS log_records, ${counts.log_bytes} AS log_bytes, ` +
    `${counts.spans} AS spans, ${counts.metric_points} AS metric_points FROM {from} GROUP BY tenant_id`);
}

function discoveryView(ctx: SchemaContext, from: string): string {
  return createMaterializedView(ctx, `${from}_tenants_mv`, from, 'tenants',
    "SELECT tenant_id, min(now64(3)) AS first_seen, argMaxState('', toDateTime64(0, 9)) AS name FROM {from} GROUP BY tenant_id");
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
    statements: (ctx) => (ctx.cluster !== undefined ? [] : ['logs', 'spans', 'metrics', 'usage_daily', 'tenants'].map(
      (table) => modifySettings(ctx, table, [`non_replicated_deduplication_window = ${dedupWindow}`]),
    )),
  },
];
