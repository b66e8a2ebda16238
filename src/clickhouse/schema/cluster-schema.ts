// The schema follows the cluster (issue 14; docs/operator.md, "Day two"). An
// ON CLUSTER statement runs on the hosts the cluster had when it was queued,
// so a server added later (a new shard or replica) has none of the tables and
// the migrator's recorded versions would never run them again. Before any
// migration, the migrator therefore (1) waits until every server of the
// cluster answers and Keeper does, (2) re-creates every object some server
// lacks, as the servers that have it define it now, with CREATE … IF NOT
// EXISTS ON CLUSTER (the cluster's current hosts: existing ones skip it; a
// new replica of a shard joins its Keeper path and fetches the shard's parts),
// and (3) drops from Keeper the replicas of servers no longer in the cluster
// (SYSTEM DROP REPLICA … FROM ZKPATH), whose queues would otherwise grow for
// ever. The same copy of current definitions is what Altinity's operator does
// for an added host; replaying migration history instead would repeat data
// copies (migration 5).
import { fail, ok } from '../../result.ts';
import type { Result } from '../../result.ts';
import { classifyStoreError } from '../clickhouse-error.ts';
import { quoted } from '../inline-params.ts';
import type { Store } from '../store.ts';
import type { SchemaTarget } from './ddl.ts';
import { shardingKeys } from './tables.ts';

/** One object as a server reports it in system.tables. */
export interface HostObject {
  readonly host: string;
  readonly name: string;
  readonly engine: string;
  readonly create: string;
}

/** Creation order: stored tables, then Distributed fronts, then views, then materialized views (they need their target). */
function rank(engine: string): number {
  if (engine.endsWith('MergeTree')) return 0;
  if (engine === 'Distributed') return 1;
  if (engine === 'View') return 2;
  return 3;
}

/** `CREATE <kind> db.name …` as `CREATE <kind> IF NOT EXISTS db.name ON CLUSTER <cluster> …`; undefined for a text it does not recognise. */
export function onClusterIfNotExists(create: string, cluster: string): string | undefined {
  const m = /^CREATE (TABLE|VIEW|MATERIALIZED VIEW|DICTIONARY) (\S+)/.exec(create);
  if (m === null) return undefined;
  return `CREATE ${m[1] ?? ''} IF NOT EXISTS ${m[2] ?? ''} ON CLUSTER ${cluster}${create.slice(m[0].length)}`;
}

/**
 * The statements that give every host of `hosts` each object some host has:
 * one per object missing anywhere, in creation order, from the definition of
 * the first host listing it. None when every host has every object.
 */
export function convergeStatements(cluster: string, hosts: readonly string[], objects: readonly HostObject[]): string[] {
  const byName = new Map<string, { object: HostObject; on: Set<string> }>();
  for (const o of objects) {
    const entry = byName.get(o.name) ?? { object: o, on: new Set<string>() };
    entry.on.add(o.host);
    byName.set(o.name, entry);
  }
  const missing = [...byName.values()].filter((e) => hosts.some((h) => !e.on.has(h)));
  return missing
    .sort((a, b) => rank(a.object.engine) - rank(b.object.engine) || (a.object.name < b.object.name ? -1 : 1))
    .flatMap((e) => onClusterIfNotExists(e.object.create, cluster) ?? []);
}

/** A replicated table's Keeper path and the replica names registered under it. */
export interface RegisteredReplicas {
  readonly zookeeperPath: string;
  readonly registered: readonly string[];
}

/** SYSTEM DROP REPLICA for every registered replica that is no server of the cluster now (`live`: the servers' replica names). */
export function dropReplicaStatements(
  tables: readonly RegisteredReplicas[],
  live: ReadonlySet<string>,
): Array<{ readonly replica: string; readonly zookeeperPath: string }> {
  return tables.flatMap((t) => t.registered.filter((r) => !live.has(r)).map((replica) => ({ replica, zookeeperPath: t.zookeeperPath })));
}

export interface ClusterWait {
  /** Give up after this long (the Job then fails and the operator starts it again). */
  readonly timeoutMs: number;
  readonly pollMs: number;
  readonly now?: () => number;
  readonly sleep?: (ms: number) => Promise<void>;
}

/** ClickHouse's ACCESS_DENIED. */
const accessDenied = 497;

const defaultWait: ClusterWait = { timeoutMs: 10 * 60_000, pollMs: 5_000 };

async function rows<T>(store: Pick<Store, 'client'>, query: string, params: Record<string, unknown> = {}): Promise<T[]> {
  const rs = await store.client.query({ query, query_params: params, format: 'JSONEachRow' });
  return rs.json<T>();
}

/**
 * Waits until Keeper answers and every server of the cluster does (each
 * replica on its own: clusterAllReplicas without skipping unavailable ones).
 * There is no event to wait for, so this polls, bounded by `timeoutMs`;
 * the last error is in the message when it gives up.
 */
export async function waitForCluster(store: Pick<Store, 'client'>, cluster: string, wait: ClusterWait = defaultWait): Promise<Result<number, string>> {
  const now = wait.now ?? Date.now;
  const sleep =
    wait.sleep ??
    ((ms: number) =>
      new Promise<void>((resolve) => {
        setTimeout(resolve, ms);
      }));
  const deadline = now() + wait.timeoutMs;
  let last: string;
  for (;;) {
    try {
      await rows(store, "SELECT count() FROM system.zookeeper WHERE path = '/'");
      const expected = await rows<{ n: number }>(store, 'SELECT toUInt32(count()) AS n FROM system.clusters WHERE cluster = {c:String}', { c: cluster });
      const answered = await rows<{ n: number }>(
        store,
        'SELECT toUInt32(count()) AS n FROM clusterAllReplicas({c:String}, system.one) SETTINGS skip_unavailable_shards = 0',
        { c: cluster },
      );
      const n = expected[0]?.n ?? 0;
      if (n > 0 && answered[0]?.n === n) return ok(n);
      last = `${answered[0]?.n ?? 0} of ${n} servers answered`;
    } catch (error) {
      const failure = classifyStoreError(error);
      // Missing grants do not heal by waiting: say which ones at once.
      if (failure.code === accessDenied)
        return fail(
          `the migrating user may not read the cluster's servers (grant REMOTE and CREATE TEMPORARY TABLE ON *.*, and SELECT ON system.zookeeper, system.clusters and system.replicas): ${failure.message}`,
        );
      last = failure.message;
    }
    if (now() >= deadline) return fail(`cluster ${cluster} not ready after ${Math.round(wait.timeoutMs / 1000)} s: ${last}`);
    await sleep(wait.pollMs);
  }
}

/** Creates on every server the objects some server lacks, then drops the Keeper entries of removed replicas; returns what it did. */
export async function convergeCluster(
  store: Pick<Store, 'client'>,
  t: SchemaTarget & { readonly cluster: string },
): Promise<{ created: string[]; droppedReplicas: string[] }> {
  const hosts = await clusterHosts(store, t.cluster);
  const objects = await clusterObjects(store, t);
  const statements = convergeStatements(t.cluster, hosts, objects);
  if (statements.length > 0) await store.client.command({ query: `CREATE DATABASE IF NOT EXISTS ${t.database} ON CLUSTER ${t.cluster}` });
  for (const query of statements) await store.client.command({ query });

  const replicated = await rows<{ zookeeper_path: string }>(
    store,
    'SELECT DISTINCT zookeeper_path FROM clusterAllReplicas({c:String}, system.replicas) WHERE database = {db:String}',
    { c: t.cluster, db: t.database },
  );
  const live = new Set(
    (
      await rows<{ replica: string }>(
        store,
        'SELECT DISTINCT replica_name AS replica FROM clusterAllReplicas({c:String}, system.replicas) WHERE database = {db:String}',
        { c: t.cluster, db: t.database },
      )
    ).map((r) => r.replica),
  );
  const registered: RegisteredReplicas[] = [];
  for (const { zookeeper_path: zookeeperPath } of replicated) {
    const names = await rows<{ name: string }>(store, 'SELECT name FROM system.zookeeper WHERE path = {p:String}', { p: `${zookeeperPath}/replicas` });
    registered.push({ zookeeperPath, registered: names.map((n) => n.name) });
  }
  const dropped: string[] = [];
  for (const d of dropReplicaStatements(registered, live)) {
    // SYSTEM statements take no query parameters; both values come from the servers' own system tables.
    await store.client.command({ query: `SYSTEM DROP REPLICA ${quoted(d.replica)} FROM ZKPATH ${quoted(d.zookeeperPath)}` });
    dropped.push(`${d.zookeeperPath}/replicas/${d.replica}`);
  }
  return { created: statements, droppedReplicas: dropped };
}

/** The servers of the cluster, each by its host name. */
export async function clusterHosts(store: Pick<Store, 'client'>, cluster: string): Promise<string[]> {
  return (await rows<{ host: string }>(store, 'SELECT hostName() AS host FROM clusterAllReplicas({c:String}, system.one)', { c: cluster })).map((h) => h.host);
}

/** The objects of the database on every server (`names`: only those). */
export async function clusterObjects(
  store: Pick<Store, 'client'>,
  t: SchemaTarget & { readonly cluster: string },
  names?: readonly string[],
): Promise<HostObject[]> {
  const only = names === undefined ? '' : ' AND name IN {names:Array(String)}';
  return rows<HostObject>(
    store,
    `SELECT hostName() AS host, name, engine, create_table_query AS create FROM clusterAllReplicas({c:String}, system.tables) WHERE database = {db:String} AND NOT is_temporary${only}`,
    { c: t.cluster, db: t.database, ...(names === undefined ? {} : { names }) },
  );
}

/** The Distributed fronts migration 9 gives a deterministic sharding key (tables.ts shardingKeys). */
export const deterministicFronts: ReadonlyArray<{ readonly table: string; readonly key: string }> = [
  { table: 'logs', key: shardingKeys.logs },
  { table: 'spans', key: shardingKeys.spans },
  { table: 'metrics', key: shardingKeys.metrics },
  { table: 'trace_index', key: shardingKeys.traceIndex },
];

/**
 * Migration 9 on a cluster: each signal table's Distributed front re-created
 * with its deterministic sharding key (docs/schema.md, "Sharding"). A front
 * holds no rows, so CREATE OR REPLACE (a new table swapped in atomically) is
 * cheap and inserts never meet a missing table; rows a front still queued
 * from background inserts are sent first (SYSTEM FLUSH DISTRIBUTED), since
 * replacing it deletes its queue. Rows already stored stay where rand() put
 * them, so reads keep asking every shard. None on one node (no fronts).
 */
export function deterministicShardingStatements(t: SchemaTarget): string[] {
  const cluster = t.cluster;
  if (cluster === undefined) return [];
  return deterministicFronts.flatMap(({ table, key }) => [
    `SYSTEM FLUSH DISTRIBUTED ${t.database}.${table} ON CLUSTER ${cluster}`,
    `CREATE OR REPLACE TABLE ${t.database}.${table} ON CLUSTER ${cluster} AS ${t.database}.${table}_local ENGINE = Distributed(${cluster}, ${t.database}, ${table}_local, ${key})`,
  ]);
}
