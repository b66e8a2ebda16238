// Applies pending migrations in order and records each in schema_migrations,
// then brings the default retention in line with the retention settings
// (TENANTRY_*_RETENTION_DAYS: the days of tenants nobody configured). From
// migration 5 on these are the tenant_retention view's defaults and the
// retention_days columns' DEFAULTs; before it, the tables' TTLs. Re-running
// is a no-op. Store failures come back as values. On a cluster it first waits
// for every server and Keeper, converts an old sharded schema_migrations
// (migrations-table.ts) and converges the schema onto servers added since
// (cluster-schema.ts).
import { createHash } from 'node:crypto';
import type { RetentionConfig } from '../../config/config.ts';
import type { Logger } from '../../log/logger.ts';
import { fail, ok } from '../../result.ts';
import type { Result } from '../../result.ts';
import { classifyStoreError } from '../clickhouse-error.ts';
import type { StoreFailure } from '../clickhouse-error.ts';
import type { Store } from '../store.ts';
import { createDatabase, createOrReplaceView, modifyColumnDefault, modifyTtl, queryTable, storageTable } from './ddl.ts';
import type { SchemaTarget } from './ddl.ts';
import { migrations as releasedMigrations } from './migrations.ts';
import { applyRetentionTtl } from './retention-ttl.ts';
import { convergeCluster, waitForCluster } from './cluster-schema.ts';
import { migrationsTable, upgradeMigrationsTable } from './migrations-table.ts';
import type { ClusterWait } from './cluster-schema.ts';
import type { Migration, SchemaContext } from './migrations.ts';
import { retentionColumn, retentionColumnType, retentionTables, retentionView, retentionViewSelect, ttlExpression } from './tables.ts';

/** What a migration run did: the versions applied, and the tables whose retention changed. */
export interface Migrated {
  readonly applied: readonly number[];
  readonly retentionChanged: readonly string[];
}

/** Why a migration run stopped, with the store's classified failure when the store refused. */
export interface MigrateFailure {
  readonly message: string;
  readonly failure?: StoreFailure;
}

const canonical: SchemaContext = { database: 'tenantry', cluster: undefined, retention: { logsDays: 30, tracesDays: 30, metricsDays: 90 } };

/** Checksum of a migration's statements rendered in a fixed context, so settings never change it. */
export function migrationChecksum(migration: Migration): string {
  return createHash('sha256').update(migration.statements(canonical).join(';\n')).digest('hex');
}

async function appliedMigrations(store: Store, t: SchemaTarget): Promise<Map<number, string>> {
  // On a cluster, this server first fetches every version another server recorded.
  if (t.cluster !== undefined) await store.client.command({ query: `SYSTEM SYNC REPLICA ${t.database}.schema_migrations` });
  const rs = await store.client.query({ query: `SELECT version, checksum FROM ${queryTable(t, 'schema_migrations')}`, format: 'JSONEachRow' });
  const rows = await rs.json<{ version: number; checksum: string }>();
  return new Map(rows.map((r) => [r.version, r.checksum]));
}

const ttlTables: ReadonlyArray<{ table: string; days: (r: RetentionConfig) => number }> = [
  { table: 'logs', days: (r) => r.logsDays },
  { table: 'spans', days: (r) => r.tracesDays },
  { table: 'metrics', days: (r) => r.metricsDays },
];

const localName = (ctx: SchemaContext, name: string): string => storageTable(ctx, name).slice(ctx.database.length + 1);

/** Before migration 5: sets each signal table's TTL to the configured days where it differs; returns the tables changed. */
async function reconcileTableTtls(store: Store, ctx: SchemaContext): Promise<string[]> {
  const rs = await store.client.query({
    query: 'SELECT name, engine_full FROM system.tables WHERE database = {db:String} AND name IN {names:Array(String)}',
    query_params: { db: ctx.database, names: ttlTables.map((t) => localName(ctx, t.table)) },
    format: 'JSONEachRow',
  });
  const engines = new Map((await rs.json<{ name: string; engine_full: string }>()).map((r) => [r.name, r.engine_full]));
  const changed: string[] = [];
  for (const { table, days } of ttlTables) {
    const current = /toIntervalDay\((\d+)\)/.exec(engines.get(localName(ctx, table)) ?? '')?.[1];
    if (current === undefined || Number(current) === days(ctx.retention)) continue;
    await store.client.command({
      query: modifyTtl(ctx, table, ttlExpression('timestamp', days(ctx.retention))),
      clickhouse_settings: { materialize_ttl_after_modify: 0 },
    });
    changed.push(table);
  }
  return changed;
}

/**
 * Sets the default retention (tenants nobody configured) to the configured
 * days where it differs; returns the tables changed. From migration 5 the
 * default lives in the tenant_retention view (what the gateway's INSERTs
 * use) and in each retention_days column's DEFAULT (what other writers'
 * rows get): the view is replaced first, so a failure half-way is redone at
 * the next start. Rows already stored keep the days they were written with.
 */
async function reconcileRetention(store: Store, ctx: SchemaContext): Promise<string[]> {
  const rs = await store.client.query({
    query: 'SELECT table, default_expression FROM system.columns WHERE database = {db:String} AND table IN {names:Array(String)} AND name = {column:String}',
    query_params: { db: ctx.database, names: retentionTables.map((r) => localName(ctx, r.table)), column: retentionColumn },
    format: 'JSONEachRow',
  });
  const defaults = new Map((await rs.json<{ table: string; default_expression: string }>()).map((r) => [r.table, r.default_expression]));
  if (defaults.size === 0) return reconcileTableTtls(store, ctx);
  const changed = retentionTables.filter((r) => defaults.get(localName(ctx, r.table)) !== String(ctx.retention[r.field]));
  if (changed.length === 0) return [];
  await store.client.command({ query: createOrReplaceView(ctx, retentionView, retentionViewSelect(queryTable(ctx, 'tenant_settings'), ctx.retention)) });
  for (const r of changed) {
    for (const query of modifyColumnDefault(ctx, r.table, retentionColumn, retentionColumnType, String(ctx.retention[r.field])))
      await store.client.command({ query });
  }
  return changed.map((r) => r.table);
}

/** Applies every pending migration to the store's database, then the retention settings. */
export async function migrate(
  store: Store,
  retention: RetentionConfig,
  log: Logger,
  migrations: readonly Migration[] = releasedMigrations,
  wait?: ClusterWait,
): Promise<Result<Migrated, MigrateFailure>> {
  const ctx: SchemaContext = { database: store.database, cluster: store.cluster, retention };
  try {
    if (ctx.cluster !== undefined) {
      const ready = await waitForCluster(store, ctx.cluster, wait);
      if (!ready.ok) return fail({ message: ready.error });
    }
    await store.client.command({ query: createDatabase(ctx) });
    if (ctx.cluster !== undefined) {
      // Before CREATE … IF NOT EXISTS, which would leave an old sharded schema_migrations as it is.
      const upgraded = await upgradeMigrationsTable(store, { ...ctx, cluster: ctx.cluster });
      if (!upgraded.ok) return fail({ message: upgraded.error });
      if (upgraded.value.length > 0) log.info('schema_migrations converted to one replicated table', { statements: upgraded.value.length });
    }
    for (const statement of migrationsTable(ctx)) await store.client.command({ query: statement });
    if (ctx.cluster !== undefined) {
      const converged = await convergeCluster(store, { ...ctx, cluster: ctx.cluster });
      if (converged.created.length + converged.droppedReplicas.length > 0)
        log.info('schema converged on the cluster', { created: converged.created.length, droppedReplicas: converged.droppedReplicas });
    }
    const applied = await appliedMigrations(store, ctx);
    const ran: number[] = [];
    for (const migration of [...migrations].sort((a, b) => a.version - b.version)) {
      const checksum = migrationChecksum(migration);
      const recorded = applied.get(migration.version);
      if (recorded !== undefined) {
        if (recorded !== checksum)
          return fail({
            message: `migration ${migration.version} (${migration.name}) was changed after it was applied to ${store.database}; add a new migration instead`,
          });
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
    const ttlChanged = await applyRetentionTtl(store, ctx);
    if (ttlChanged.length > 0) log.info('retention TTL recomputed', { tables: ttlChanged });
    return ok({ applied: ran, retentionChanged });
  } catch (error) {
    const failure = classifyStoreError(error);
    return fail({ message: `schema migration failed: ${failure.message}`, failure });
  }
}
