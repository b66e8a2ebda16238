// Embedded mode: one more chDB connection on the data dir, used only to send
// KILL QUERY for the API's statements (api/query/running-statements.ts).
// A chDB connection runs one statement at a time, so neither the queries'
// connection (busy with the statement to stop) nor an INSERT connection
// (busy with a block for up to a second) can send it at once.
import { ClickHouseLogLevel, createClient } from '@clickhouse/client';
import type { ClickHouseClient } from '@clickhouse/client';
import { embeddedPath, loadChdb } from '../clickhouse/store.ts';
import type { ClickHouseConfig } from '../config/config.ts';

/** The control connection, or undefined in server mode (any HTTP request reaches the server beside the running ones). */
export async function openControlConnection(config: ClickHouseConfig): Promise<ClickHouseClient | undefined> {
  if (config.kind !== 'embedded') return undefined;
  const chdb = await loadChdb();
  if (chdb === undefined) return undefined;
  return createClient({ connection: chdb.createChdbConnection({ path: embeddedPath(config.dataDir) }), log: { level: ClickHouseLogLevel.OFF } });
}
