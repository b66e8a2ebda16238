// Runs read queries with the configured time limit: ClickHouse cancels the
// query itself (max_execution_time) and an abort signal backs that up, so a
// slow query never outlives its request. Failures come back as ApiErrors.
import type { Store } from '../../../src/clickhouse/store.ts';
import { classifyStoreError } from '../../../src/clickhouse/clickhouse-error.ts';
import type { Logger } from '../../../src/log/logger.ts';
import { fail, internal, invalidRequest, ok, unavailable } from '../../http/api-error.ts';
import type { Result } from '../../http/api-error.ts';
import type { SqlParams } from './sql-params.ts';

export interface QueryRunner {
  /** Rows of a SELECT as objects. */
  rows<T>(sql: string, params: SqlParams): Promise<Result<T[]>>;
  /** A statement without result rows (INSERT … SELECT). */
  command(sql: string, params: SqlParams): Promise<Result<undefined>>;
}

export function createQueryRunner(store: Store, timeoutMs: number, log: Logger): QueryRunner {
  const settings = {
    max_execution_time: timeoutMs / 1000,
    timeout_overflow_mode: 'throw',
    session_timezone: 'UTC',
  } as const;

  const failure = (error: unknown, aborted: boolean, sql: string): Result<never> => {
    const f = classifyStoreError(error);
    if (aborted || f.kind === 'timeout') {
      log.warn('query timed out', { timeoutMs, sql: sql.slice(0, 300) });
      return fail(unavailable(`the query ran longer than ${timeoutMs / 1000} s and was cancelled: narrow the time range or the filters`));
    }
    if (f.kind === 'unavailable') {
      log.warn('store unavailable', { error: f.message });
      return fail(unavailable('the telemetry store is unavailable; retry shortly'));
    }
    if (f.kind === 'invalid_query' && f.code === 427) return fail(invalidRequest('a filter pattern is not valid'));
    log.error('query failed', { error: f.message, code: f.code, sql: sql.slice(0, 300) });
    return fail(internal());
  };

  async function timed<T>(sql: string, run: (signal: AbortSignal) => Promise<T>): Promise<Result<T>> {
    const controller = new AbortController();
    // ClickHouse cancels at max_execution_time; the abort is the backstop for a store that does not.
    const timer = setTimeout(() => { controller.abort(); }, timeoutMs + 250);
    try {
      return ok(await run(controller.signal));
    } catch (error) {
      return failure(error, controller.signal.aborted, sql);
    } finally {
      clearTimeout(timer);
    }
  }

  return {
    rows: <T>(sql: string, params: SqlParams) => timed(sql, async (signal) => {
      const rs = await store.client.query({ query: sql, query_params: params.values, format: 'JSONEachRow', abort_signal: signal, clickhouse_settings: settings });
      return rs.json<T>();
    }),
    command: (sql: string, params: SqlParams) => timed(sql, async (signal) => {
      await store.client.command({ query: sql, query_params: params.values, abort_signal: signal, clickhouse_settings: settings });
      return undefined;
    }),
  };
}
