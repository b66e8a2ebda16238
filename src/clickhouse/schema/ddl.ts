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
