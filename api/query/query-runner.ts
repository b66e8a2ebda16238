// Runs read queries bounded inside ClickHouse: each statement carries its
// time limit (max_execution_time), its memory and result-size bounds
// (src/target/statement-limits.ts) and a name; a statement whose time ran
// out, whose client went away or whose process is shutting down is killed
// in the store (./running-statements.ts), so it never outlives its request.
// Every query asks the store gate for its turn (per-key concurrency;
// embedded ClickHouse's query slots, one statement per tenant), and the
// time limit counts that wait. Failures come back as ApiErrors; a statement
// over one of its bounds is a 400 naming it.
import { EXCEPTION_TAG_HEADER_NAME, extractErrorAtTheEndOfChunk } from '@clickhouse/client';
import type { ClickHouseClient } from '@clickhouse/client';
import { classifyStoreError } from '../../src/clickhouse/clickhouse-error.ts';
import { openGate } from '../../src/clickhouse/store-gate.ts';
import type { StoreGate, TurnRefusal } from '../../src/clickhouse/store-gate.ts';
import type { Logger } from '../../src/log/logger.ts';
import type { StatementLimits } from '../../src/target/statement-limits.ts';
import type { Result } from '../../src/result.ts';
import { fail, ok } from '../../src/result.ts';
import type { ApiError } from '../http/api-error.ts';
import { internal, invalidRequest, unavailable } from '../http/api-error.ts';
import { RunningStatements, statementTag } from './running-statements.ts';
import type { StopReason } from './running-statements.ts';
import type { QueryBudget, Statement } from './tenant-scan.ts';

/** ClickHouse settings one statement adds to the runner's own: names and values from the code, never from a request. */
export type StatementSettings = Readonly<Record<string, number>>;

/**
 * The port the routes read the store through (tests inject their own to
 * simulate store failures). It takes only Statements, which only a
 * TenantScan makes (./tenant-scan.ts): each carries its tenant predicate's
 * parameter and the budget it runs within (the caller's turn, the tenant's
 * time limit, the request's abort signal).
 */
export interface QueryRunner {
  /** Rows of a SELECT whose result is bounded (a page, an aggregate), as objects. */
  rows<T>(statement: Statement): Promise<Result<T[], ApiError>>;
  /** Rows of a SELECT that may return very many rows (raw points), parsed row by row. */
  manyRows<T>(statement: Statement, settings?: StatementSettings): Promise<Result<T[], ApiError>>;
  /** A statement without result rows (INSERT … SELECT). */
  command(statement: Statement): Promise<Result<undefined, ApiError>>;
  /** The raw RowBinary body of a SELECT (no FORMAT clause in its text), for callers that decode it themselves; optional so test doubles need not have it. */
  binary?(statement: Statement, settings?: StatementSettings): Promise<Result<Buffer, ApiError>>;
}

/**
 * The query's SETTINGS clause. A clause, not the client's clickhouse_settings:
 * the embedded store turns those into `SET` statements run before the query
 * (one extra statement each, and they stay set on the process's one session).
 */
export function settingsClause(timeoutMs: number, threads?: number, settings: StatementSettings = {}): string {
  const limit = `max_execution_time = ${Math.max(1, Math.round(timeoutMs)) / 1000}, timeout_overflow_mode = 'throw'`;
  const own = Object.entries(settings)
    .map(([name, value]) => {
      if (!/^[a-z_]+$/.test(name) || !Number.isFinite(value)) throw new Error(`bug: statement setting ${name} = ${value}`);
      return `, ${name} = ${value}`;
    })
    .join('');
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
  return body === '' ? [] : (JSON.parse(`[${body.replaceAll('\n', ',')}]`) as T[]);
}

/** What the runner needs of the store: its client's query and command, and how to stop a statement. */
export interface QueryTarget {
  /** Embedded: chDB in this process (statements are awaited until they really end); absent or server: a ClickHouse server. */
  readonly mode?: 'embedded' | 'server';
  /** Server mode: the cluster whose nodes a KILL QUERY reaches. */
  readonly cluster?: string | undefined;
  /** The connection that sends KILL QUERY; absent: `client` (an embedded connection runs one statement at a time, so give it another). */
  readonly control?: Pick<ClickHouseClient, 'command'>;
  readonly client: Pick<ClickHouseClient, 'query' | 'command'> & Partial<Pick<ClickHouseClient, 'exec'>>;
}

/** A refused turn as the API answers it. */
function refusal(turn: TurnRefusal, timeoutMs: number): ApiError {
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

/** The runner of a serving process: it can also stop every statement in flight. */
export interface StoppableQueryRunner extends QueryRunner {
  /** Kills every statement in flight (each answers 503) and refuses new ones: the first step of shutting down. */
  stopAll(): Promise<void>;
}

const mib = (bytes: number): number => Math.round(bytes / 1024 ** 2);

/** A statement over one of its own bounds, as the 400 that names it. */
function overLimit(limit: 'memory' | 'result' | 'read', limits: StatementLimits): ApiError {
  if (limit === 'memory') {
    const bound =
      limits.memoryBytes === undefined ? "the store's memory limit" : `max_memory_usage, ${mib(limits.memoryBytes)} MiB, from TENANTRY_MEMORY_LIMIT_BYTES`;
    return invalidRequest(
      `the query needs more memory than one query may use (${bound}): narrow the time range, the filters or the grouping, or widen the interval`,
    );
  }
  if (limit === 'result') {
    const bound =
      limits.resultBytes === undefined
        ? 'max_result_rows/max_result_bytes'
        : `max_result_rows ${limits.resultRows ?? 0} / max_result_bytes ${mib(limits.resultBytes)} MiB, from TENANTRY_MEMORY_LIMIT_BYTES`;
    return invalidRequest(`the query's result is larger than one query may return (${bound}): narrow the time range or the filters, or widen the interval`);
  }
  return invalidRequest('the query reads more rows than one query may (max_rows_to_read / max_bytes_to_read): narrow the time range or the filters');
}

/** A statement stopped before it ended, as the API answers it (a client that went away never reads it); `turnMs`: the gate's turn limit. */
function stoppedAnswer(reason: StopReason, runMs: number, turnMs = 0): ApiError {
  if (reason === 'turn') {
    return unavailable(
      `the query ran longer than its turn of ${turnMs / 1000} s on the shared store while another tenant's query waited, and was cancelled; ` +
        'retry shortly, or narrow the time range or the filters so that it ends within its turn',
    );
  }
  if (reason === 'shutdown') return unavailable('the API is shutting down and cancelled the query; retry shortly');
  if (reason === 'client_gone') return unavailable('the client stopped waiting; the query was cancelled');
  return unavailable(`the query ran longer than ${Math.round(runMs / 100) / 10} s and was cancelled: narrow the time range or the filters`);
}

/** ClickHouse's bounds as SETTINGS entries; `bounded`: the statement returns rows the process reads (not an INSERT … SELECT). */
function limitSettings(limits: StatementLimits, bounded: boolean): StatementSettings {
  const settings: Record<string, number> = {};
  if (limits.memoryBytes !== undefined) settings['max_memory_usage'] = limits.memoryBytes;
  if (bounded && limits.resultBytes !== undefined) settings['max_result_bytes'] = limits.resultBytes;
  if (bounded && limits.resultRows !== undefined) settings['max_result_rows'] = limits.resultRows;
  return settings;
}

/**
 * The ClickHouse runner: the gate's turn, the statement's bounds, its name
 * and its stop, the row parsing, store failures classified into ApiErrors.
 */
export function createQueryRunner(
  store: QueryTarget,
  processTimeoutMs: number,
  log: Logger,
  gate: StoreGate = openGate,
  limits: StatementLimits = {},
): StoppableQueryRunner {
  const embedded = store.mode === 'embedded';
  const running = new RunningStatements(store.control ?? store.client, { cluster: store.cluster, embedded, log });
  // Server mode: the server also cancels a SELECT whose HTTP connection the client closed (the abort below closes it).
  const serverSettings = embedded ? undefined : { cancel_http_readonly_queries_on_client_close: 1 as const };

  /** `runMs`: how long the statement was allowed to run; `turnMs`: its turn limit; `stopped`: why it was stopped, if it was. */
  const failure = (
    error: unknown,
    stopped: StopReason | undefined,
    runMs: number,
    turnMs: number,
    sql: string,
    timeoutMs: number,
    requestId: string | undefined,
  ): Result<never, ApiError> => {
    const f = classifyStoreError(error);
    // Every line names the request, so that the id in an error body finds its cause.
    const about = requestId === undefined ? {} : { requestId };
    if (stopped === 'turn') log.info("query stopped at the end of its turn for another tenant's query", { ...about, turnMs, sql: sql.slice(0, 300) });
    if (stopped !== undefined && stopped !== 'timeout') return fail(stoppedAnswer(stopped, runMs, turnMs));
    if (f.limit === 'memory' || f.limit === 'result' || f.limit === 'read') {
      log.info('query over a statement limit', { ...about, limit: f.limit, code: f.code, sql: sql.slice(0, 300) });
      return fail(overLimit(f.limit, limits));
    }
    if (stopped === 'timeout' || f.kind === 'timeout') {
      log.warn('query timed out', { ...about, timeoutMs, runMs: Math.round(runMs), sql: sql.slice(0, 300) });
      return fail(stoppedAnswer('timeout', runMs));
    }
    if (f.kind === 'unavailable') {
      log.warn('store unavailable', { ...about, error: f.message });
      return fail(unavailable('the telemetry store is unavailable; retry shortly'));
    }
    if (f.kind === 'invalid_query' && f.code === 427) return fail(invalidRequest('a filter pattern is not valid'));
    log.error('query failed', { ...about, error: f.message, code: f.code, sql: sql.slice(0, 300) });
    return fail(internal());
  };

  /**
   * Runs `run` in the caller's turn with the time left: ClickHouse's own
   * limits, and a KILL as the backstop for a statement that does not stop,
   * whose client went away, or whose turn the gate ended for another
   * tenant's query (the budget's turn signal). `run` gets the SETTINGS
   * clause and the signal its client call takes (none in embedded mode).
   */
  async function timed<T>(
    { sql, budget: request }: { readonly sql: string; readonly budget: QueryBudget },
    run: (settings: string, signal: AbortSignal | undefined) => Promise<T>,
    statement?: StatementSettings,
    bounded = true,
  ): Promise<Result<T, ApiError>> {
    // A tenant's own time limit (limits.queryTimeoutSeconds) applies within the process's (TENANTRY_QUERY_TIMEOUT_SECONDS).
    const timeoutMs = Math.min(processTimeoutMs, request.timeoutMs ?? processTimeoutMs);
    if (running.closed) return fail(stoppedAnswer('shutdown', 0));
    let stopped: () => StopReason | undefined = () => undefined;
    let runMs = timeoutMs;
    let turnMs = 0;
    try {
      const turn = await gate.query(request.caller, timeoutMs, (budget) => {
        runMs = budget.ms;
        turnMs = budget.turn?.turnMs ?? 0;
        return running.run(
          budget.ms + 250,
          request.abort,
          async (s) => {
            stopped = s.stopped;
            // A failed embedded statement's leftover entry in system.processes is cleared by the store's pool (src/clickhouse/chdb-pool.ts).
            return await run(settingsClause(budget.ms, budget.threads, { ...limitSettings(limits, bounded), ...statement }) + statementTag(s.id), s.signal);
          },
          budget.turn?.signal,
        );
      });
      if (!turn.ok) {
        if (turn.error.refused === 'deadline')
          log.warn('query waited out its time limit for the store', {
            ...(request.requestId === undefined ? {} : { requestId: request.requestId }),
            timeoutMs,
            waitedMs: turn.error.waitedMs,
          });
        return fail(refusal(turn.error, timeoutMs));
      }
      return ok(turn.value);
    } catch (error) {
      return failure(error, stopped(), runMs, turnMs, sql, timeoutMs, request.requestId);
    }
  }

  return {
    stopAll: () => running.stopAll(),
    // Read whole and parsed at once: about half the client-side cost of the
    // client's per-row object stream for the few hundred rows of a page.
    rows: <T>(statement: Statement) =>
      timed(statement, async (settings, signal) => {
        const { sql, params } = statement;
        const rs = await store.client.query({
          query: sql + settings,
          query_params: params.values,
          format: 'JSONEachRow',
          abort_signal: signal,
          clickhouse_settings: serverSettings,
        });
        const tag = rs.response_headers[EXCEPTION_TAG_HEADER_NAME];
        return parseEachRow<T>(await rs.text(), typeof tag === 'string' ? tag : undefined);
      }),
    manyRows: <T>(statement: Statement, own?: StatementSettings) =>
      timed(
        statement,
        async (settings, signal) => {
          const { sql, params } = statement;
          const rs = await store.client.query({
            query: sql + settings,
            query_params: params.values,
            format: 'JSONEachRow',
            abort_signal: signal,
            clickhouse_settings: serverSettings,
          });
          return rs.json<T>();
        },
        own,
      ),
    command: (statement: Statement) =>
      timed(
        statement,
        async (settings, signal) => {
          await store.client.command({ query: statement.sql + settings, query_params: statement.params.values, abort_signal: signal });
          return undefined;
        },
        undefined,
        false,
      ),
    // exec, not query: the client's query() knows no binary formats, exec hands back the body as it is.
    binary: (statement: Statement, own?: StatementSettings) =>
      timed(
        statement,
        async (settings, signal) => {
          if (store.client.exec === undefined) throw new Error('bug: this store client has no exec');
          const rs = await store.client.exec({
            query: `${statement.sql}${settings}\nFORMAT RowBinary`,
            query_params: statement.params.values,
            abort_signal: signal,
          });
          const chunks: Buffer[] = [];
          for await (const chunk of rs.stream) chunks.push(chunk as Buffer);
          const body = Buffer.concat(chunks);
          const tag = rs.response_headers[EXCEPTION_TAG_HEADER_NAME];
          if (typeof tag === 'string' && body.subarray(-15).toString('latin1') === '__exception__\r\n') throw extractErrorAtTheEndOfChunk(body, tag);
          return body;
        },
        own,
      ),
  };
}
