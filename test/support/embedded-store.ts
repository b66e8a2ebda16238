// One embedded ClickHouse per test process (libchdb binds one data directory
// per process); suites isolate themselves by database name instead.
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { drainPending } from 'chdb';
import { openStore } from '../../src/clickhouse/store.ts';
import type { Store } from '../../src/clickhouse/store.ts';
import { migrate } from '../../src/clickhouse/schema/migrator.ts';
import type { RetentionConfig } from '../../src/config/config.ts';
import { silentLogger } from '../../src/log/logger.ts';

export const testDataRoot = join(import.meta.dirname, '..', '..', '.tenantry-test');
const storeDir = join(testDataRoot, `chdb-${process.pid}`);

let shared: Promise<Store> | undefined;

/** The process-wide embedded store, opened on first use. */
export function sharedStore(): Promise<Store> {
  shared ??= openStore({ kind: 'embedded', dataDir: storeDir, database: 'unused' }).then((r) => {
    if (!r.ok) throw new Error(r.error);
    return r.value;
  });
  return shared;
}

export const defaultRetention: RetentionConfig = { logsDays: 30, tracesDays: 30, metricsDays: 90 };

/** A unique database name, so concurrent suites and reruns never collide. */
export function uniqueDatabase(prefix: string): string {
  return `t_${prefix.replace(/[^A-Za-z0-9_]/g, '_')}_${randomBytes(4).toString('hex')}`;
}

/** A view of the shared store bound to a new, empty database; closing it drops the database. */
export async function databaseStore(prefix: string): Promise<Store> {
  const base = await sharedStore();
  const database = uniqueDatabase(prefix);
  return {
    client: base.client,
    insertClients: base.insertClients,
    writes: base.writes,
    mode: base.mode,
    database,
    cluster: undefined,
    spoolDir: base.spoolDir,
    close: async () => {
      await base.client.command({ query: `DROP DATABASE IF EXISTS ${database}` });
    },
  };
}

/** A new database with the full schema applied. */
export async function migratedStore(prefix: string, retention: RetentionConfig = defaultRetention): Promise<Store> {
  const store = await databaseStore(prefix);
  const result = await migrate(store, retention, silentLogger);
  if (!result.ok) throw new Error(result.error.message);
  return store;
}

/** The rows a query answers, as JSON objects. */
export async function rows<T>(store: Store, query: string, params: Record<string, unknown> = {}): Promise<T[]> {
  const rs = await store.client.query({ query, query_params: params, format: 'JSONEachRow' });
  return rs.json<T>();
}

/** Closes the shared store and removes its directory (root hook, after all tests). */
export async function closeSharedStore(): Promise<void> {
  if (shared === undefined) return;
  const store = await shared;
  shared = undefined;
  await store.close();
  // A connection's close returns before it is gone while a native call still runs on it (a statement a test
  // stopped waiting for): wait for every one, so that neither the folder's removal nor the process's exit
  // races the engine.
  await drainPending();
  rmSync(storeDir, { recursive: true, force: true });
}
