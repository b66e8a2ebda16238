// Inserts rows already encoded as RowBinary, the cheapest input format for
// ClickHouse to parse (docs/gateway.md, "Insert path and format"). A server takes them
// as the body of `INSERT … FORMAT RowBinary`. chDB's connection cannot carry
// a binary body (it appends the body to the SQL text), so in embedded mode
// the rows are read by ClickHouse's file() table function in one INSERT …
// SELECT, on one of the store's INSERT connections: a write-ahead-log
// segment's rows file as it is (insertRowBinaryFile), rows in memory after
// being staged in a file of the data dir, removed after (insertRowBinary).
// Rows of a signal table get their retention_days from the INSERT (the
// tenant_retention view, read once per INSERT; docs/schema.md, "Retention"):
// a server reads the body through input() in an INSERT … SELECT too.
import type { ClickHouseClient } from '@clickhouse/client';
import { randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { Readable } from 'node:stream';
import { queryTable } from './schema/ddl.ts';
import type { TableSpec } from './schema/ddl.ts';
import { retentionColumn, retentionDaysAtInsert, retentionTables, retentionView } from './schema/tables.ts';
import type { Store } from './store.ts';

export interface RowBinaryTarget {
  /** Table name, without database. */
  readonly table: string;
  /** Columns in the order the rows hold them. */
  readonly columns: readonly string[];
  /**
   * `name Type, …` of those columns, for file(). LowCardinality(String) is
   * read as String (RowBinary encodes both alike) and converted by the
   * INSERT: parsing straight into LowCardinality columns was about half of
   * an embedded INSERT's CPU (`npm run bench:insert-cost`).
   */
  readonly structure: string;
  /** The tenant_retention column giving the rows' retention_days (signal tables), or undefined. */
  readonly retentionFrom?: string | undefined;
}

/** The insert target for rows holding `columns` of `spec`, in that order; throws on a column the table lacks. */
export function rowBinaryTarget(spec: TableSpec, columns: readonly string[]): RowBinaryTarget {
  const types = new Map(
    spec.columns.map((definition) => {
      const space = definition.indexOf(' ');
      return [definition.slice(0, space), definition.slice(space + 1).replace(/ CODEC\(.*\)$/, '')] as const;
    }),
  );
  const structure = columns.map((c) => {
    const type = types.get(c);
    if (type === undefined) throw new Error(`table ${spec.name} has no column ${c}`);
    return `${c} ${type.replaceAll('LowCardinality(String)', 'String')}`;
  });
  const retentionFrom = columns.includes('tenant_id') ? retentionTables.find((r) => r.table === spec.name)?.column : undefined;
  return { table: spec.name, columns, structure: structure.join(', '), retentionFrom };
}

/** Writes the rows to a new file; recreates the spool folder if something removed it. */
async function stage(spoolDir: string, path: string, chunks: readonly Buffer[]): Promise<void> {
  try {
    await writeFile(path, chunks, { flag: 'wx', mode: 0o600 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    await mkdir(spoolDir, { recursive: true, mode: 0o700 });
    await writeFile(path, chunks, { flag: 'wx', mode: 0o600 });
  }
}

const safeToken = /^[A-Za-z0-9_-]{1,200}$/;

/**
 * A block's part is written without its skip indexes; the first merge that
 * takes the part in builds them (materialize_skip_indexes_on_merge, on by
 * default). Each skip index is two more files in every inserted part, and
 * creating files was most of what the indexes cost an INSERT: 12 of a compact
 * spans part's 26 files. `npm run bench:insert-cost`: INSERT CPU per row
 * 0.62× for logs and 0.86× for spans, the merge's CPU unchanged (ADR 6,
 * "Where the CPU went, fourth look"). A query reads a part without an index
 * as if no granule could be skipped; such parts are the newest ones, of at
 * most one block each, until merged.
 */
export const skipIndexesAtMerge = 'materialize_skip_indexes_on_insert = 0';

/**
 * The SETTINGS of a block insert. With a deduplication token, ClickHouse
 * skips a block it has already stored under that token (the table's
 * deduplication window), and so do the materialized views fed by it. chDB
 * keeps a query's client-side settings for the whole session, so these are
 * part of the SQL; the token is checked, not bound (SETTINGS takes no
 * parameters). A block spread over many partitions is stored, not refused
 * (max_partitions_per_insert_block = 0). Partitions are (retention_days, day)
 * (migration 5): the gateway rejects items outside [now − their tenant's
 * retention, now + skew] before acknowledging, so a block spans, for each
 * distinct retention R among its tenants, at most R + 1 days, plus the days a
 * backlog waited in the write-ahead log: Σ(R + 1) over those retentions. With
 * the default retentions and one value per signal that stays under
 * ClickHouse's default of 100 (metrics: 91), but retention may be set up to
 * 36500 days, tenants may have different ones, and a backlog replayed after
 * an outage covers the days it waited. With the default, such a block would
 * fail with TOO_MANY_PARTS (252), which clickhouse-error.ts counts as the
 * store being unavailable: it would be retried for ever and hold the log
 * back. What the default guards against (a fine-grained PARTITION BY) cannot
 * happen with this key: its partitions are bounded by the days and the
 * retention values in use (docs/schema.md, "Retention").
 */
export function insertSettings(token: string | undefined, cluster: string | undefined): string {
  const settings = ['max_partitions_per_insert_block = 0', skipIndexesAtMerge];
  // On a cluster the INSERT goes through a Distributed table: in the foreground it returns once every shard's
  // rows are written on a replica there, so an acknowledged block is stored (issue 14), not queued on the receiving server.
  if (cluster !== undefined) settings.push('distributed_foreground_insert = 1');
  if (token !== undefined) {
    if (!safeToken.test(token)) throw new Error(`bug: deduplication token ${JSON.stringify(token)} is not a plain name`);
    settings.push(`insert_deduplication_token = '${token}'`, 'deduplicate_blocks_in_dependent_materialized_views = 1');
  }
  return `SETTINGS ${settings.join(', ')}`;
}

/** The INSERT … SELECT of the rows read by `source` (file() or input()), with a signal table's retention_days computed. */
function insertSelect(store: Store, target: RowBinaryTarget, source: string, settings: string): string {
  const table = queryTable(store, target.table);
  if (target.retentionFrom === undefined) return `INSERT INTO ${table} (${target.columns.join(', ')}) SELECT * FROM ${source} ${settings}`;
  const retention = retentionDaysAtInsert(`${store.database}.${retentionView}`, target.retentionFrom, 'tenant_id');
  return `INSERT INTO ${table} (${target.columns.join(', ')}, ${retentionColumn}) WITH ${retention.with} SELECT *, ${retention.expression} FROM ${source} ${settings}`;
}

/**
 * Inserts the RowBinary chunks (whole rows) in one INSERT; rejects as the
 * client does. `client` is one of the store's INSERT clients; an embedded
 * one must not run another statement meanwhile (the caller leases it).
 */
export async function insertRowBinary(
  store: Store,
  target: RowBinaryTarget,
  chunks: readonly Buffer[],
  dedupToken?: string,
  client: ClickHouseClient = store.insertClients[0],
): Promise<void> {
  if (store.spoolDir === undefined) {
    await sendBody(store, target, Readable.from(chunks), dedupToken, client);
    return;
  }
  const path = join(store.spoolDir, `${target.table}-${randomUUID()}.bin`);
  try {
    await stage(store.spoolDir, path, chunks);
    await insertFromFile(store, target, path, dedupToken, client);
  } finally {
    await rm(path, { force: true });
  }
}

/**
 * Inserts the rows of a file holding nothing but whole RowBinary rows, in
 * one INSERT: ClickHouse reads it in place in embedded mode, a server gets
 * it as the body. The file is left as it is.
 */
export async function insertRowBinaryFile(
  store: Store,
  target: RowBinaryTarget,
  path: string,
  dedupToken?: string,
  client: ClickHouseClient = store.insertClients[0],
): Promise<void> {
  if (store.spoolDir === undefined) await sendBody(store, target, createReadStream(path), dedupToken, client);
  else await insertFromFile(store, target, path, dedupToken, client);
}

async function sendBody(store: Store, target: RowBinaryTarget, body: Readable, dedupToken: string | undefined, client: ClickHouseClient): Promise<void> {
  const settings = insertSettings(dedupToken, store.cluster);
  const query =
    target.retentionFrom === undefined
      ? `INSERT INTO ${queryTable(store, target.table)} (${target.columns.join(', ')}) ${settings} FORMAT RowBinary`
      : `${insertSelect(store, target, 'input({structure:String})', settings)} FORMAT RowBinary`;
  const result = await client.exec({ query, query_params: { structure: target.structure }, values: body });
  // The response body of an INSERT is empty; drain it so the socket is reused.
  result.stream.resume();
}

async function insertFromFile(store: Store, target: RowBinaryTarget, path: string, dedupToken: string | undefined, client: ClickHouseClient): Promise<void> {
  const settings = insertSettings(dedupToken, store.cluster);
  // Absolute: file() must not resolve a relative path against ClickHouse's own folders. Bound, and inlined by the
  // embedded store's connections (ADR 8), so the INSERT is not held behind statements with parameters.
  await client.command({
    query: insertSelect(store, target, "file({path:String}, 'RowBinary', {structure:String})", settings),
    query_params: { path: resolve(path), structure: target.structure },
  });
}
