// Runs read queries with the configured time limit: ClickHouse cancels the
// query itself (max_execution_time) and an abort signal backs that up, so a
// slow query never outlives its request. Every query asks the store gate for
// its turn (per-key concurrency; embedded ClickHouse's one statement at a
// time, INSERTs first), and the time limit counts that wait. Failures come
// back as ApiErrors.
import { EXCEPTION_TAG_HEADER_NAME, extractErrorAtTheEndOfChunk } from '@clickhouse/client';
import type { ClickHouseClient } from '@clickhouse/client';
import { classifyStoreError } from '../../../src/clickhouse/clickhouse-error.ts';
import { openGate } from '../../../src/clickhouse/store-gate.ts';
import type { QueryTurn, StoreGate } from '../../../src/clickhouse/store-gate.ts';
import type { Logger } from '../../../src/log/logger.ts';
import type { Result } from '../../../src/result.ts';
import { fail, ok } from '../../../src/result.ts';
import type { ApiError } from '../../http/api-error.ts';
import { internal, invalidRequest, unavailable } from '../../http/api-error.ts';
import { currentCaller, currentTimeoutMs } from './query-caller.ts';
import type { SqlParams } from './sql-params.ts';

/** ClickHouse settings one statement adds to the runner's own: names and values from the code, never from a request. */
export type StatementSettings = Readonly<Record<string, number>>;

/** The port the routes read the store through (tests inject their own to simulate store failures). */
export interface QueryRunner {
  /** Rows of a SELECT whose result is bounded (a page, an aggregate), as objects. */
  rows<T>(sql: string, params: SqlParams): Promise<Result<T[], ApiError>>;
  /** Rows of a SELECT that may return very many rows (raw points), parsed row by row. */
  manyRows<T>(sql: string, params: SqlParams, settings?: StatementSettings): Promise<Result<T[], ApiError>>;
  /** A statement without result rows (INSERT … SELECT). */
  command(sql: string, params: SqlParams): Promise<Result<undefined, ApiError>>;
  /** The raw RowBinary body of a SELECT (no FORMAT clause in `sql`), for callers that decode it themselves; optional so test doubles need not have it. */
  binary?(sql: string, params: SqlParams, settings?: StatementSettings): Promise<Result<Buffer, ApiError>>;
}

/**
 * The query's SETTINGS clause. A clause, not the client's clickhouse_settings:
 * the embedded store turns those into `SET` statements run before the query
 * (one extra statement each, and they stay set on the process's one session).
 */
export function settingsClause(timeoutMs: number, threads?: number, settings: StatementSettings = {}): string {
  const limit = `max_execution_time = ${Math.max(1, Math.round(timeoutMs)) / 1000}, timeout_overflow_mode = 'throw'`;
  const own = Object.entries(settings).map(([name, value]) => {
    if (!/^[a-z_]+$/.test(name) || !Number.isFinite(value)) throw new Error(`bug: statement setting ${name} = ${value}`);
    return `, ${name} = ${value}`;
  }).join('');
  return `\nSETTINGS ${limit}, session_timezone = 'UTC'${own}${threads === undefined ? '' : `, max_threads = ${threads}`}`;
}

/**
 * Rows of a JSONEachRow body read whole. A raw newline only ever separates
 * rows (JSON escapes those inside strings), so the body becomes one JSON
 * array and one JSON.parse. A server that fails after it began answering
 * ends the body with its tagged exception block (ClickHouse 25.11 and later):
 * that becomes the ClickHouse error it carries, exactly as the client's
 * row stream would report it.
 */
export function parseEachRow<T>(text: string, exceptionTag: string | undefined): T[] {
  if (exceptionTag !== undefined && text.endsWith('__exception__\r\n')) throw extractErrorAtTheEndOfChunk(Buffer.from(text), exceptionTag);
  const body = text.endsWith('\n') ? text.slice(0, -1) : text;
  return body === '' ? [] : JSON.parse(`[${body.replaceAll('\n', ',')}]`) as T[];
}

/** What the runner needs of the store: its client's query and command. */
export interface QueryTarget {
  readonly client: Pick<ClickHouseClient, 'query' | 'command'> & Partial<Pick<ClickHouseClient, 'exec'>>;
}

/** A refused turn as the API answers it. */
function refusal(turn: Exclude<QueryTurn<unknown>, { ok: true }>, timeoutMs: number): ApiError {
  if (turn.refused === 'tenant_limit') {
    return {
      code: 'rate_limited',
      message: `this tenant already has ${turn.limit} queries running (limits.maxConcurrentQueries) and none finished in time: wait for them, then retry`,
    };
  }
  if (turn.refused === 'key_limit') {
    return {
      code: 'rate_limited',
      message: `this API key already has ${turn.limit} queries running (TENANTRY_MAX_CONCURRENT_QUERIES) and none finished in time: wait for them, then retry`,
    };
  }
  return unavailable(`the telemetry store was busy for the whole query time limit (${timeoutMs / 1000} s); retry shortly`);
}

/** The ClickHouse runner: the gate's turn, the time limit, the row parsing, store failures classified into ApiErrors. */
export function createQueryRunner(store: QueryTarget, processTimeoutMs: number, log: Logger, gate: StoreGate = openGate): QueryRunner {
  /** `runMs`: how long the statement was allowed to run. */
  const failure = (error: unknown, aborted: boolean, runMs: number, sql: string, timeoutMs: number): Result<never, ApiError> => {
    const f = classifyStoreError(error);
    if (aborted || f.kind === 'timeout') {
      log.warn('query timed out', { timeoutMs, runMs: Math.round(runMs), sql: sql.slice(0, 300) });
      return fail(unavailable(`the query ran longer than ${Math.round(runMs / 100) / 10} s and was cancelled: narrow the time range or the filters`));
    }
    if (f.kind === 'unavailable') {
      log.warn('store unavailable', { error: f.message });
      return fail(unavailable('the telemetry store is unavailable; retry shortly'));
    }
    if (f.kind === 'invalid_query' && f.code === 427) return fail(invalidRequest('a filter pattern is not valid'));
    log.error('query failed', { error: f.message, code: f.code, sql: sql.slice(0, 300) });
    return fail(internal());
  };

  /** Runs `run` in the caller's turn with the time left: ClickHouse's own limit, and an abort as the backstop for a store that does not stop. */
  async function timed<T>(sql: string, run: (settings: string, signal: AbortSignal) => Promise<T>, statement?: StatementSettings): Promise<Result<T, ApiError>> {
    // A tenant's own time limit (limits.queryTimeoutSeconds) applies within the process's (TENANTRY_QUERY_TIMEOUT_SECONDS).
    const timeoutMs = Math.min(processTimeoutMs, currentTimeoutMs() ?? processTimeoutMs);
    const controller = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    let runMs = timeoutMs;
    try {
      const turn = await gate.query(currentCaller(), timeoutMs, (budget) => {
        runMs = budget.ms;
        timer = setTimeout(() => { controller.abort(); }, budget.ms + 250);
        return run(settingsClause(budget.ms, budget.threads, statement), controller.signal);
      });
      if (!turn.ok) {
        if (turn.refused === 'deadline') log.warn('query waited out its time limit for the store', { timeoutMs, waitedMs: turn.waitedMs });
        return fail(refusal(turn, timeoutMs));
      }
      return ok(turn.value);
    } catch (error) {
      return failure(error, controller.signal.aborted, runMs, sql, timeoutMs);
    } finally {
      clearTimeout(timer);
    }
  }

  return {
    // Read whole and parsed at once: about half the client-side cost of the
    // client's per-row object stream for the few hundred rows of a page.
    rows: <T>(sql: string, params: SqlParams) => timed(sql, async (settings, signal) => {
      const rs = await store.client.query({ query: sql + settings, query_params: params.values, format: 'JSONEachRow', abort_signal: signal });
      const tag = rs.response_headers[EXCEPTION_TAG_HEADER_NAME];
      return parseEachRow<T>(await rs.text(), typeof tag === 'string' ? tag : undefined);
    }),
    manyRows: <T>(sql: string, params: SqlParams, statement?: StatementSettings) => timed(sql, async (settings, signal) => {
      const rs = await store.client.query({ query: sql + settings, query_params: params.values, format: 'JSONEachRow', abort_signal: signal });
      return rs.json<T>();
    }, statement),
    command: (sql: string, params: SqlParams) => timed(sql, async (settings, signal) => {
      await store.client.command({ query: sql + settings, query_params: params.values, abort_signal: signal });
      return undefined;
    }),
    // exec, not query: the client's query() knows no binary formats, exec hands back the body as it is.
    binary: (sql: string, params: SqlParams, statement?: StatementSettings) => timed(sql, async (settings, signal) => {
      if (store.client.exec === undefined) throw new Error('bug: this store client has no exec');
      const rs = await store.client.exec({ query: `${sql}${settings}\nFORMAT RowBinary`, query_params: params.values, abort_signal: signal });
      const chunks: Buffer[] = [];
      for await (const chunk of rs.stream) chunks.push(chunk as Buffer);
      const body = Buffer.concat(chunks);
      const tag = rs.response_headers[EXCEPTION_TAG_HEADER_NAME];
      if (typeof tag === 'string' && body.subarray(-15).toString('latin1') === '__exception__\r\n') throw extractErrorAtTheEndOfChunk(body, tag);
      return body;
    }, statement),
  };
}
