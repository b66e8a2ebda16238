// schema_migrations, the record of applied migrations, and the upgrade of its
// old cluster layout (docs/operator.md, "Day two"). Before issue 14's day-two
// work a cluster stored it like every table: a sharded ReplicatedReplacingMergeTree
// `schema_migrations_local` behind a Distributed `schema_migrations`. Now it is
// one replicated table that is not sharded; CREATE … IF NOT EXISTS leaves the
// old Distributed table in place, and SYSTEM SYNC REPLICA on it fails, so
// migrate converts it first: a replicated table under a staging name (already
// under the final Keeper path), the rows copied into it, the two exchanged,
// the old ones dropped. Each step is safe to repeat, and which steps run is
// decided from every server's system.tables, so a conversion interrupted at
// any point finishes on the next run.
import { fail, ok } from '../../result.ts';
import type { Result } from '../../result.ts';
import type { Store } from '../store.ts';
import { clusterHosts, clusterObjects, convergeStatements } from './cluster-schema.ts';
import type { HostObject } from './cluster-schema.ts';
import { createTable } from './ddl.ts';
import type { SchemaTarget } from './ddl.ts';

const table = 'schema_migrations';
/** The replicated table while rows are copied into it; after the exchange, the old Distributed table. */
const staging = 'schema_migrations_replicated';
/** The old layout's sharded table behind the Distributed one. */
const oldLocal = 'schema_migrations_local';

const columns = ['version UInt32', 'name String', 'checksum String', 'applied_at DateTime64(3) DEFAULT now64(3)'];

/** The non-sharded replicated table under `name`: every server a replica of one Keeper path without {shard}. */
function replicatedTable(t: SchemaTarget & { readonly cluster: string }, name: string): string {
  return (
    `CREATE TABLE IF NOT EXISTS ${t.database}.${name} ON CLUSTER ${t.cluster} (\n  ${columns.join(',\n  ')}\n)\n` +
    `ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/all/${t.database}/${table}', '{replica}', applied_at)\nORDER BY version`
  );
}

/**
 * schema_migrations: on one node a ReplacingMergeTree; on a cluster one
 * replicated table that is not sharded (every server holds every row, under
 * one Keeper path without {shard}), read and written directly, so the
 * versions are known from any server without a Distributed read of all shards.
 */
export function migrationsTable(t: SchemaTarget): string[] {
  if (t.cluster === undefined) {
    return createTable(t, { name: table, columns, engine: 'ReplacingMergeTree(applied_at)', orderBy: 'version', shardingKey: 'version' });
  }
  return [replicatedTable({ ...t, cluster: t.cluster }, table)];
}

/**
 * What one server holds: nothing yet (a server added since), the old layout
 * (`sharded`: schema_migrations is Distributed), the new table with the old
 * ones still beside it (`swapped`: exchanged, not yet dropped), only the new
 * table (`replicated`), or a combination no step of the conversion leaves.
 */
export type HostLayout = 'none' | 'sharded' | 'swapped' | 'replicated' | 'unknown';

/** The layout of one server from its objects named schema_migrations*. */
export function hostLayout(objects: readonly HostObject[]): HostLayout {
  const engine = (name: string): string | undefined => objects.find((o) => o.name === name)?.engine;
  const main = engine(table);
  const stage = engine(staging);
  if (main === undefined) return stage === undefined ? 'none' : 'unknown';
  if (main === 'Distributed') return stage === undefined || stage.startsWith('Replicated') ? 'sharded' : 'unknown';
  if (!main.startsWith('Replicated')) return 'unknown';
  if (stage !== undefined && stage !== 'Distributed') return 'unknown';
  return stage === undefined && engine(oldLocal) === undefined ? 'replicated' : 'swapped';
}

export type MigrationsTablePlan =
  { readonly kind: 'current' } | { readonly kind: 'convert'; readonly statements: readonly string[] } | { readonly kind: 'refuse'; readonly message: string };

/** The statements dropping what the old layout leaves after the exchange (the old Distributed table under the staging name first). */
function dropOld(t: SchemaTarget & { readonly cluster: string }): string[] {
  return [staging, oldLocal].map((name) => `DROP TABLE IF EXISTS ${t.database}.${name} ON CLUSTER ${t.cluster} SYNC`);
}

/**
 * The conversion's remaining statements, decided from every server's
 * schema_migrations* objects (`hosts`: every server of the cluster now).
 * Servers disagreeing (some still on the old table, some already on the new
 * one) mean a conversion's ON CLUSTER statements are still queued for some
 * of them: running the exchange again would swap those back, so the plan
 * refuses with what to wait for.
 */
export function migrationsTablePlan(
  t: SchemaTarget & { readonly cluster: string },
  hosts: readonly string[],
  objects: readonly HostObject[],
): MigrationsTablePlan {
  const layouts = new Map(hosts.map((h) => [h, hostLayout(objects.filter((o) => o.host === h))]));
  const on = (layout: HostLayout): string[] => hosts.filter((h) => layouts.get(h) === layout);
  const unknown = on('unknown');
  if (unknown.length > 0) {
    return {
      kind: 'refuse',
      message: `${t.database}.${table} has an unexpected layout on ${unknown.join(', ')} (tables ${table}, ${staging}, ${oldLocal}): fix it by hand, then run migrate again`,
    };
  }
  const sharded = on('sharded');
  const converted = [...on('swapped'), ...on('replicated')];
  if (sharded.length > 0 && converted.length > 0) {
    return {
      kind: 'refuse',
      message:
        `${t.database}.${table} is being converted to one replicated table: still Distributed on ${sharded.join(', ')}, replicated on ${converted.join(', ')}. ` +
        "If the distributed DDL queue still holds the conversion's statements for some of them, wait until it has run them, then run migrate again; " +
        'if not (a server created the new table before the conversion, e.g. by an earlier migrate), drop that empty schema_migrations on it by hand (DROP TABLE … SYNC) and run migrate again',
    };
  }
  if (sharded.length > 0) {
    // A server added since the old layout has neither table: it gets the old pair first, so the exchange runs everywhere.
    const oldPair = convergeStatements(
      t.cluster,
      hosts,
      objects.filter((o) => o.name === table || o.name === oldLocal),
    );
    const list = columns.map((c) => c.slice(0, c.indexOf(' '))).join(', ');
    return {
      kind: 'convert',
      statements: [
        ...oldPair,
        replicatedTable(t, staging),
        // Every version any shard recorded; repeating the copy only adds rows of versions already there (read as a set).
        `INSERT INTO ${t.database}.${staging} (${list}) SELECT ${list} FROM ${t.database}.${table} SETTINGS skip_unavailable_shards = 0`,
        `EXCHANGE TABLES ${t.database}.${table} AND ${t.database}.${staging} ON CLUSTER ${t.cluster}`,
        ...dropOld(t),
      ],
    };
  }
  if (on('swapped').length > 0) return { kind: 'convert', statements: dropOld(t) };
  return { kind: 'current' };
}

/** Converts an old-layout schema_migrations on a cluster (see the file's header); returns what it ran, or why it would not. */
export async function upgradeMigrationsTable(
  store: Pick<Store, 'client'>,
  t: SchemaTarget & { readonly cluster: string },
): Promise<Result<readonly string[], string>> {
  const hosts = await clusterHosts(store, t.cluster);
  const objects = await clusterObjects(store, t, [table, staging, oldLocal]);
  const plan = migrationsTablePlan(t, hosts, objects);
  if (plan.kind === 'refuse') return fail(plan.message);
  if (plan.kind === 'current') return ok([]);
  for (const query of plan.statements) await store.client.command({ query });
  return ok(plan.statements);
}
