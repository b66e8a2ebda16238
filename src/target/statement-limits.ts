// The bounds every API statement carries into ClickHouse (its SETTINGS),
// derived from the memory the process is given (TENANTRY_MEMORY_LIMIT_BYTES).
//
// - Memory (max_memory_usage), embedded mode only: chDB runs inside this
//   process, two query statements at once (the store gate's slots, one per
//   tenant), beside the gateway, the INSERTs and chDB's own caches; a
//   quarter of the process's memory each leaves half to those. In server mode the engine's memory is
//   the server's, bounded by its own settings profile, not this pod's limit.
// - Result size (max_result_bytes, max_result_rows), both modes: what a
//   statement returns is read into this process (parsed JSON costs a few
//   times its block size), and up to maxConcurrentQueries statements per key
//   may do so at once.
// - Rows and bytes read (max_rows_to_read/max_bytes_to_read) are not set:
//   a tenant's legitimate month-long query reads every row it holds in that
//   month; time and memory bound what it costs instead.
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

/** Share of the process's memory one embedded query statement may use. */
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
  return mode === 'embedded' ? { memoryBytes: Math.max(minMemoryBytes, Math.floor(memory * embeddedMemoryShare)), ...result } : result;
}
