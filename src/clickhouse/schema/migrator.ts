// Applies pending migrations in order and records each in schema_migrations,
// then brings table TTLs in line with the retention settings. Re-running is a
// no-op. Store failures come back as values.
import { createHash } from 'node:crypto';
import type { RetentionConfig } from '../../config/config.ts';
import type { Logger } from '../../log/logger.ts';
import { classifyStoreError } from '../clickhouse-error.ts';
import type { StoreFailure } from '../clickhouse-error.ts';
import type { Store } from '../store.ts';
import { createDatabase, createTable, modifyTtl, queryTable, storageTable } from './ddl.ts';
import type { SchemaTarget } from './ddl.ts';
import { migrations as releasedMigrations } from './migrations.ts';
import type { Migration, SchemaContext } from './migrations.ts';
import { ttlExpression } from './tables.ts';

export type MigrateResult =
  | { readonly ok: true; readonly applied: readonly number[]; readonly retentionChanged: readonly string[] }
  | { readonly ok: false; readonly message: string; readonly failure?: StoreFailure };

const canonical: SchemaContext = { database: 'tenantry', cluster: undefined, retention: { logsDays: 30, tracesDays: 30, metricsDays: 90 } };

/** Checksum of a migration's statements rendered in a fixed context, so settings never change it. */
export function migrationChecksum(migration: Migration): string {
  return createHash('sha256').update(migration.statements(canonical).join(';\n')).digest('hex');
}

function migrationsTable(t: SchemaTarget): string[] {
  return createTable(t, {
    name: 'schema_migrations',
    columns: ['version UInt32', 'name String', 'checksum String', 'applied_at DateTime64(3) DEFAULT now64(3)'],
    engine: 'ReplacingMergeTree(applied_at)',
    orderBy: 'version',
    shardingKey: 'version',
  });
}

async function appliedMigrations(store: Store, t: SchemaTarget): Promise<Map<number, string>> {
  const rs = await store.client.query({ query: `SELECT version, checksum FROM ${queryTable(t, 'schema_migrations')}`, format: 'JSONEachRow' });
  const rows = await rs.json<{ version: number; checksum: string }>();
  return new Map(rows.map((r) => [r.version, r.checksum]));
}

const ttlTables: ReadonlyArray<{ table: string; days: (r: RetentionConfig) => number }> = [
  { table: 'logs', days: (r) => r.logsDays },
  { table: 'spans', days: (r) => r.tracesDays },
  { table: 'metrics', days: (r) => r.metricsDays },
];

/** Sets each signal table's TTL to the configured days where it differs; returns the tables changed. */
async function reconcileRetention(store: Store, ctx: SchemaContext): Promise<string[]> {
  const local = (name: string): string => storageTable(ctx, name).slice(ctx.database.length + 1);
  const rs = await store.client.query({
    query: 'SELECT name, engine_full FROM system.tables WHERE database = {db:String} AND name IN {names:Array(String)}',
    query_params: { db: ctx.database, names: ttlTables.map((t) => local(t.table)) },
    format: 'JSONEachRow',
  });
  const engines = new Map((await rs.json<{ name: string; engine_full: string }>()).map((r) => [r.name, r.engine_full]));
  const changed: string[] = [];
  for (const { table, days } of ttlTables) {
    const current = /toIntervalDay\((\d+)\)/.exec(engines.get(local(table)) ?? '')?.[1];
    if (current === undefined || Number(current) === days(ctx.retention)) continue;
    await store.client.command({
      query: modifyTtl(ctx, table, ttlExpression('timestamp', days(ctx.retention))),
      clickhouse_settings: { materialize_ttl_after_modify: 0 },
    });
    changed.push(table);
  }
  return changed;
}

/** Applies every pending migration to the store's database, then the retention settings. */
export async function migrate(store: Store, retention: RetentionConfig, log: Logger, migrations: readonly Migration[] = releasedMigrations): Promise<MigrateResult> {
  const ctx: SchemaContext = { database: store.database, cluster: store.cluster, retention };
  try {
    await store.client.command({ query: createDatabase(ctx) });
    for (const statement of migrationsTable(ctx)) await store.client.command({ query: statement });
    const applied = await appliedMigrations(store, ctx);
    const ran: number[] = [];
    for (const migration of [...migrations].sort((a, b) => a.version - b.version)) {
      const checksum = migrationChecksum(migration);
      const recorded = applied.get(migration.version);
      if (recorded !== undefined) {
        if (recorded !== checksum) return { ok: false, message: `migration ${migration.version} (${migration.name}) was changed after it was applied to ${store.database}; add a new migration instead` };
        continue;
      }
      for (const statement of migration.statements(ctx)) await store.client.command({ query: statement });
      await store.client.insert({
        table: queryTable(ctx, 'schema_migrations'),
        values: [{ version: migration.version, name: migration.name, checksum }],
        format: 'JSONEachRow',
      });
      log.info('schema migration applied', { version: migration.version, name: migration.name, database: store.database });
      ran.push(migration.version);
    }
    const retentionChanged = await reconcileRetention(store, ctx);
    if (retentionChanged.length > 0) log.info('retention changed', { tables: retentionChanged, retention });
    return { ok: true, applied: ran, retentionChanged };
  } catch (error) {
    const failure = classifyStoreError(error);
    return { ok: false, message: `schema migration failed: ${failure.message}`, failure };
  }
}
