// The bounds every API statement carries into ClickHouse (its SETTINGS),
// derived from the memory the process is given (TENANTRY_MEMORY_LIMIT_BYTES).
//
// - Memory (max_memory_usage), embedded mode only: chDB runs inside this
//   process, beside the gateway, the INSERTs and chDB's own caches; the
//   query statements together may take a quarter of the process's memory,
//   shared by the store gate's slots (two statements at once, one per
//   tenant): an eighth each. bench:isolation's heavy neighbour measured the
//   process at 0.9 of its bound with a quarter each and one heavy tenant, so
//   two heavy tenants would have passed it. In server mode the engine's memory is
//   the server's, bounded by its own settings profile, not this pod's limit.
// - Result size (max_result_bytes, max_result_rows), both modes: what a
//   statement returns is read into this process (parsed JSON costs a few
//   times its block size), and up to maxConcurrentQueries statements per key
//   may do so at once.
// - Rows and bytes read (max_rows_to_read/max_bytes_to_read) are not set:
//   a tenant's legitimate month-long query reads every row it holds in that
//   month; time and memory bound what it costs instead.
import { embeddedQueryConnections } from '../clickhouse/store.ts';
import type { Store } from '../clickhouse/store.ts';
import type { QueryLimitsConfig } from '../config/config.ts';

/** Per-statement bounds, in ClickHouse's units; an absent one is not set. */
export interface StatementLimits {
  /** max_memory_usage: bytes one statement may allocate. */
  readonly memoryBytes?: number;
  /** max_result_bytes: uncompressed bytes of the result's blocks. */
  readonly resultBytes?: number;
  /** max_result_rows. */
  readonly resultRows?: number;
}

/** Share of the process's memory the embedded query statements running at once may use together. */
export const embeddedMemoryShare = 0.25;

/** Share of the process's memory one statement's result may take as ClickHouse blocks. */
export const resultShare = 1 / 32;

/** Result bytes per result row allowed: a row is at least a few numbers, and each becomes a JavaScript value. */
const bytesPerResultRow = 64;

/** Floors that keep a small pod's queries useful. */
const minMemoryBytes = 64 * 1024 ** 2;
const minResultBytes = 8 * 1024 ** 2;

/** The bounds of the API's statements in a process with `queries.memoryLimitBytes` of memory. */
export function statementLimits(mode: Store['mode'], queries: Pick<QueryLimitsConfig, 'memoryLimitBytes'>): StatementLimits {
  const memory = queries.memoryLimitBytes;
  const resultBytes = Math.max(minResultBytes, Math.floor(memory * resultShare));
  const result = { resultBytes, resultRows: Math.floor(resultBytes / bytesPerResultRow) };
  // One statement per query connection (the gate's slots) at once.
  const memoryBytes = Math.max(minMemoryBytes, Math.floor((memory * embeddedMemoryShare) / embeddedQueryConnections));
  return mode === 'embedded' ? { memoryBytes, ...result } : result;
}
