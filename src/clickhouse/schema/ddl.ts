// Builds CREATE statements for one node (MergeTree family) or a cluster
// (Replicated* tables named <table>_local behind Distributed tables that take
// the plain name), so migrations describe each table once.

export interface SchemaTarget {
  readonly database: string;
  readonly cluster: string | undefined;
}

export interface TableSpec {
  readonly name: string;
  readonly columns: readonly string[];
  readonly indexes?: readonly string[];
  /** MergeTree family engine without "Replicated", e.g. "MergeTree" or "SummingMergeTree((a, b))". */
  readonly engine: string;
  readonly orderBy: string;
  readonly partitionBy?: string;
  readonly ttl?: string;
  readonly settings?: readonly string[];
  /** Sharding expression of the Distributed table (cluster mode). */
  readonly shardingKey: string;
}

const onCluster = (t: SchemaTarget): string => (t.cluster === undefined ? '' : ` ON CLUSTER ${t.cluster}`);

/** Name of the table that physically stores rows: `<name>_local` on a cluster. */
export function storageTable(t: SchemaTarget, name: string): string {
  return `${t.database}.${t.cluster === undefined ? name : `${name}_local`}`;
}

/** Name to read from and insert into: the table itself, or its Distributed front. */
export function queryTable(t: SchemaTarget, name: string): string {
  return `${t.database}.${name}`;
}

function replicated(t: SchemaTarget, name: string, engine: string): string {
  if (t.cluster === undefined) return engine;
  const open = engine.indexOf('(');
  const family = open < 0 ? engine : engine.slice(0, open);
  const args = open < 0 ? '' : engine.slice(open + 1, -1);
  const path = `'/clickhouse/tables/{shard}/${t.database}/${name}_local', '{replica}'`;
  return `Replicated${family}(${path}${args === '' ? '' : `, ${args}`})`;
}

/** CREATE TABLE statements for a spec: one on a single node, two on a cluster. */
export function createTable(t: SchemaTarget, spec: TableSpec): string[] {
  const body = [...spec.columns, ...(spec.indexes ?? []).map((i) => `INDEX ${i}`)].join(',\n  ');
  const clauses = [
    `ENGINE = ${replicated(t, spec.name, spec.engine)}`,
    spec.partitionBy === undefined ? '' : `PARTITION BY ${spec.partitionBy}`,
    `ORDER BY ${spec.orderBy}`,
    spec.ttl === undefined ? '' : `TTL ${spec.ttl}`,
    spec.settings === undefined || spec.settings.length === 0 ? '' : `SETTINGS ${spec.settings.join(', ')}`,
  ].filter((c) => c !== '');
  const local = `CREATE TABLE IF NOT EXISTS ${storageTable(t, spec.name)}${onCluster(t)} (\n  ${body}\n)\n${clauses.join('\n')}`;
  if (t.cluster === undefined) return [local];
  const distributed = `CREATE TABLE IF NOT EXISTS ${queryTable(t, spec.name)}${onCluster(t)} AS ${storageTable(t, spec.name)} ENGINE = Distributed(${t.cluster}, ${t.database}, ${spec.name}_local, ${spec.shardingKey})`;
  return [local, distributed];
}

/** A materialized view from one stored table into another (both local on a cluster). */
export function createMaterializedView(t: SchemaTarget, name: string, from: string, to: string, select: string): string {
  return `CREATE MATERIALIZED VIEW IF NOT EXISTS ${t.database}.${name}${onCluster(t)} TO ${storageTable(t, to)} AS\n${select.replaceAll('{from}', storageTable(t, from))}`;
}

export function createDatabase(t: SchemaTarget): string {
  return `CREATE DATABASE IF NOT EXISTS ${t.database}${onCluster(t)}`;
}

/** ALTER … MODIFY TTL on the storing table, used when retention settings change. */
export function modifyTtl(t: SchemaTarget, name: string, ttl: string): string {
  return `ALTER TABLE ${storageTable(t, name)}${onCluster(t)} MODIFY TTL ${ttl}`;
}

/** ALTER … MODIFY SETTING on the storing table. */
export function modifySettings(t: SchemaTarget, name: string, settings: readonly string[]): string {
  return `ALTER TABLE ${storageTable(t, name)}${onCluster(t)} MODIFY SETTING ${settings.join(', ')}`;
}

export interface ColumnCodec {
  readonly column: string;
  /** The column's type, unchanged (MODIFY COLUMN restates it). */
  readonly type: string;
  readonly codec: string;
}

/**
 * ALTER … MODIFY COLUMN … CODEC on the storing table. A codec change is
 * metadata only: new parts and every merge use the new codec, existing parts
 * are not rewritten (no mutation).
 */
export function modifyCodecs(t: SchemaTarget, name: string, columns: readonly ColumnCodec[]): string {
  return `ALTER TABLE ${storageTable(t, name)}${onCluster(t)} ${columns.map((c) => `MODIFY COLUMN ${c.column} ${c.type} CODEC(${c.codec})`).join(', ')}`;
}

/** CREATE OR REPLACE VIEW (a plain view, read where it is queried): one per node. */
export function createOrReplaceView(t: SchemaTarget, name: string, select: string): string {
  return `CREATE OR REPLACE VIEW ${t.database}.${name}${onCluster(t)} AS\n${select}`;
}

/** DROP TABLE IF EXISTS: the storing table, and its Distributed front on a cluster. */
export function dropTable(t: SchemaTarget, name: string): string[] {
  const local = `DROP TABLE IF EXISTS ${storageTable(t, name)}${onCluster(t)} SYNC`;
  return t.cluster === undefined ? [local] : [`DROP TABLE IF EXISTS ${queryTable(t, name)}${onCluster(t)} SYNC`, local];
}

/**
 * INSERT … SELECT of `columns` from one table into another, through the
 * Distributed fronts on a cluster (an INSERT runs on one node; the rows are
 * spread over the shards again by the table's sharding key), waiting until
 * every shard has them.
 */
export function copyRows(t: SchemaTarget, from: string, to: string, columns: readonly string[]): string {
  const list = columns.join(', ');
  const settings = t.cluster === undefined ? '' : ' SETTINGS distributed_foreground_insert = 1';
  return `INSERT INTO ${queryTable(t, to)} (${list}) SELECT ${list} FROM ${queryTable(t, from)}${settings}`;
}

/** EXCHANGE TABLES of two storing tables (atomic; views and Distributed fronts follow the names). */
export function exchangeTables(t: SchemaTarget, a: string, b: string): string {
  return `EXCHANGE TABLES ${storageTable(t, a)} AND ${storageTable(t, b)}${onCluster(t)}`;
}

/**
 * ALTER … MODIFY COLUMN … DEFAULT on the storing table and, on a cluster, on
 * its Distributed front too (an INSERT through it fills omitted columns from
 * its own definition). Metadata only.
 */
export function modifyColumnDefault(t: SchemaTarget, name: string, column: string, type: string, expression: string): string[] {
  const alter = (table: string): string => `ALTER TABLE ${table}${onCluster(t)} MODIFY COLUMN ${column} ${type} DEFAULT ${expression}`;
  return t.cluster === undefined ? [alter(storageTable(t, name))] : [alter(storageTable(t, name)), alter(queryTable(t, name))];
}

/** ALTER … ADD COLUMN on a cluster's Distributed front (its storing tables got the column another way); none on one node. */
export function addFrontColumn(t: SchemaTarget, name: string, definition: string): string[] {
  return t.cluster === undefined ? [] : [`ALTER TABLE ${queryTable(t, name)}${onCluster(t)} ADD COLUMN IF NOT EXISTS ${definition}`];
}
