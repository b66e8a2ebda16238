// Opens the one ClickHouse client a process uses: in-process chDB (embedded,
// the default) or a ClickHouse server over HTTP. Both are @clickhouse/client,
// so every query in the project is written once for both.
import { mkdirSync, readdirSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ClickHouseLogLevel, createClient } from '@clickhouse/client';
import type { ClickHouseClient } from '@clickhouse/client';
import type { ClickHouseConfig } from '../config/config.ts';
import { fail, ok } from '../result.ts';
import type { Result } from '../result.ts';
import { pooledConnection } from './chdb-pool.ts';
import type { ClientConnection } from './chdb-pool.ts';
import { WriteEpoch } from './write-epoch.ts';

/** Embedded mode: query statements that run at once (the store gate's query slots, one connection each). */
export const embeddedQueryConnections = 2;

/**
 * Embedded mode: connections `client` spreads statements over: one per query slot, and one more for what does not
 * pass the gate (settings refreshes, the replica registry's heartbeat, schema checks), so that such a statement,
 * or a query beside it, never queues behind a long query statement on a busy connection.
 */
const embeddedClientConnections = embeddedQueryConnections + 1;

export interface Store {
  /**
   * Server mode: an HTTP client, any number of statements at once.
   * Embedded mode: chDB connections on the data dir as one (./chdb-pool.ts),
   * one per query slot and one more: chDB runs one statement at a time per
   * connection, so each statement goes to an idle one, its
   * parameters inlined (chDB would run every statement with bound
   * parameters one at a time in the whole process).
   */
  readonly client: ClickHouseClient;
  /**
   * The clients of the gateway's block INSERTs (src/clickhouse/row-binary-insert.ts).
   * Server mode: `client` alone, which runs any number of INSERTs at once.
   * Embedded mode: two more chDB connections on the same data dir, each
   * running one INSERT at a time, so that an INSERT runs beside queries
   * instead of behind them, and two INSERTs beside each other.
   */
  readonly insertClients: readonly [ClickHouseClient, ...ClickHouseClient[]];
  /** Embedded mode: the count of statements that may have written (no other process writes the data dir); undefined for a server. */
  readonly writes: WriteEpoch | undefined;
  readonly mode: 'embedded' | 'server';
  /** Database that holds every table; a validated identifier, safe to splice into SQL. */
  readonly database: string;
  /** Cluster for ON CLUSTER DDL, server mode only. */
  readonly cluster: string | undefined;
  /**
   * Embedded mode only: a folder of the data dir where bulk inserts stage
   * binary rows for ClickHouse's file() function (src/clickhouse/row-binary-insert.ts).
   */
  readonly spoolDir: string | undefined;
  close(): Promise<void>;
}

/** The folder inside TENANTRY_DATA_DIR that chDB owns. */
export function embeddedPath(dataDir: string): string {
  return join(dataDir, 'clickhouse');
}

/** The folder inside TENANTRY_DATA_DIR where inserts stage their rows; emptied on open (its files live for one INSERT). */
function openSpool(dataDir: string): string {
  // Absolute: file() must not resolve it against ClickHouse's own folders.
  const spool = resolve(dataDir, 'insert-spool');
  mkdirSync(spool, { recursive: true, mode: 0o700 });
  for (const name of readdirSync(spool)) rmSync(join(spool, name), { force: true });
  return spool;
}

export interface ChdbConnectionModule {
  // chdb types its connection against its own copy of @clickhouse/client-common;
  // the shape is the same contract, so it is typed here as the client's.
  createChdbConnection(options: { path: string }): ClientConnection;
}

/** Loads chdb's connection module, or undefined when the optional package is not installed. */
export async function loadChdb(): Promise<ChdbConnectionModule | undefined> {
  try {
    // Not a literal: TypeScript must not resolve the optional package, which the image's build stage leaves out (--omit=optional).
    const specifier: string = 'chdb/connection';
    return (await import(specifier)) as ChdbConnectionModule;
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') return undefined;
    throw error;
  }
}

/** Opens the store described by the config; a missing chdb package is a value, not a crash. */
export async function openStore(config: ClickHouseConfig, load: () => Promise<ChdbConnectionModule | undefined> = loadChdb): Promise<Result<Store, string>> {
  if (config.kind === 'server') {
    const client = createClient({
      url: config.url,
      username: config.user,
      password: config.password,
      request_timeout: 300_000,
      compression: { request: true, response: true },
      // Failures are classified and logged by Tenantry as JSON lines; the client's own text logger stays quiet.
      log: { level: ClickHouseLogLevel.OFF },
      // Progress headers keep long queries' connections alive through load balancers.
      clickhouse_settings: { output_format_json_quote_64bit_integers: 1, send_progress_in_http_headers: 1, http_headers_progress_interval_ms: '20000' },
    });
    return ok({
      client,
      insertClients: [client],
      writes: undefined,
      mode: 'server',
      database: config.database,
      cluster: config.cluster,
      spoolDir: undefined,
      close: () => client.close(),
    });
  }
  const chdb = await load();
  if (chdb === undefined) {
    return fail(
      'embedded ClickHouse needs the optional npm package "chdb", which is not installed: run `npm install` (on Linux x64/arm64 glibc or macOS), or set TENANTRY_CLICKHOUSE_URL to use a ClickHouse server',
    );
  }
  const path = embeddedPath(config.dataDir);
  try {
    mkdirSync(path, { recursive: true });
    const spoolDir = openSpool(config.dataDir);
    const writes = new WriteEpoch();
    const connect = (connections: number): ClickHouseClient =>
      createClient({
        connection: pooledConnection(
          Array.from({ length: connections }, () => chdb.createChdbConnection({ path })),
          writes,
        ),
        log: { level: ClickHouseLogLevel.OFF },
      });
    const client = connect(embeddedClientConnections);
    const insertClients = [connect(1), connect(1)] as const;
    const close = async (): Promise<void> => {
      await Promise.all([...insertClients, client].map((c) => c.close()));
    };
    return ok({ client, insertClients, writes, mode: 'embedded', database: config.database, cluster: undefined, spoolDir, close });
  } catch (error) {
    return fail(`cannot open embedded ClickHouse at ${path}: ${(error as Error).message}`);
  }
}
