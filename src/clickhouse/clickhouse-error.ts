// ClickHouse failures are classified here, once, by error code and network
// error kind (never by message text), so callers decide on a value.
import { ClickHouseError } from '@clickhouse/client';

export type StoreFailureKind = 'unavailable' | 'timeout' | 'invalid_query' | 'internal';

export interface StoreFailure {
  readonly kind: StoreFailureKind;
  readonly message: string;
  /** ClickHouse's numeric error code, when the server answered. */
  readonly code: number | undefined;
  /**
   * The per-statement limit the statement ran into, when that is why it
   * failed: a query's own bound (its SETTINGS), which the API answers as a
   * 4xx naming it. `kind` stays what it was for every other caller.
   */
  readonly limit?: StatementLimit;
}

/** Which of a statement's own limits stopped it: max_memory_usage, max_result_rows/bytes, max_rows/bytes_to_read, max_execution_time. */
export type StatementLimit = 'memory' | 'result' | 'read' | 'time';

// https://github.com/ClickHouse/ClickHouse/blob/master/src/Common/ErrorCodes.cpp
const timeoutCodes = new Set([159 /* TIMEOUT_EXCEEDED */, 394 /* QUERY_WAS_CANCELLED */, 209 /* SOCKET_TIMEOUT */]);
const unavailableCodes = new Set([
  210 /* NETWORK_ERROR */, 241 /* MEMORY_LIMIT_EXCEEDED */, 202 /* TOO_MANY_SIMULTANEOUS_QUERIES */, 242 /* TABLE_IS_READ_ONLY */, 252 /* TOO_MANY_PARTS */,
  999 /* KEEPER_EXCEPTION */, 425 /* SYSTEM_ERROR */, 243 /* NOT_ENOUGH_SPACE */,
  // A data dir that went read-only or lost its files: the store refuses writes, it is not a bug of the query.
  74 /* CANNOT_READ_FROM_FILE_DESCRIPTOR */, 75 /* CANNOT_WRITE_TO_FILE_DESCRIPTOR */, 76 /* CANNOT_OPEN_FILE */, 77 /* CANNOT_CLOSE_FILE */,
  1001 /* STD_EXCEPTION: std::filesystem errors such as EROFS */,
]);
const invalidQueryCodes = new Set([
  6 /* CANNOT_PARSE_TEXT */, 26 /* CANNOT_PARSE_QUOTED_STRING */, 27 /* CANNOT_PARSE_INPUT_ASSERTION_FAILED */, 36 /* BAD_ARGUMENTS */,
  41 /* CANNOT_PARSE_DATETIME */, 43 /* ILLEGAL_TYPE_OF_ARGUMENT */, 53 /* TYPE_MISMATCH */, 62 /* SYNTAX_ERROR */, 69 /* ARGUMENT_OUT_OF_BOUND */,
  72 /* CANNOT_PARSE_NUMBER */, 117 /* INCORRECT_DATA */, 158 /* TOO_MANY_ROWS */, 307 /* TOO_MANY_BYTES */, 396 /* TOO_MANY_ROWS_OR_BYTES */,
  427 /* CANNOT_COMPILE_REGEXP */, 457 /* BAD_QUERY_PARAMETER */, 456 /* UNKNOWN_QUERY_PARAMETER */,
]);
// 241 is also ClickHouse's answer when the server as a whole is out of
// memory; the code does not tell the two apart, and either way the query
// that asked for the memory is the one to narrow.
const limitCodes: ReadonlyMap<number, StatementLimit> = new Map([
  [241 /* MEMORY_LIMIT_EXCEEDED */, 'memory'],
  [396 /* TOO_MANY_ROWS_OR_BYTES: max_result_rows/bytes */, 'result'],
  [158 /* TOO_MANY_ROWS: max_rows_to_read */, 'read'],
  [307 /* TOO_MANY_BYTES: max_bytes_to_read */, 'read'],
  [159 /* TIMEOUT_EXCEEDED */, 'time'],
]);
const networkErrors = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENOTFOUND', 'EPIPE', 'EAI_AGAIN', 'UND_ERR_SOCKET']);

/** Classifies anything a ClickHouse call threw. */
export function classifyStoreError(error: unknown): StoreFailure {
  if (error instanceof ClickHouseError || isClickHouseShaped(error)) {
    const code = Number((error as { code: string }).code);
    const message = (error as Error).message;
    const limit = limitCodes.get(code);
    const kind: StoreFailureKind = timeoutCodes.has(code)
      ? 'timeout'
      : unavailableCodes.has(code)
        ? 'unavailable'
        : invalidQueryCodes.has(code)
          ? 'invalid_query'
          : 'internal';
    return limit === undefined ? { kind, message, code } : { kind, message, code, limit };
  }
  if (error instanceof Error) {
    const sysCode = (error as { code?: unknown }).code;
    if (typeof sysCode === 'string' && networkErrors.has(sysCode)) return { kind: 'unavailable', message: error.message, code: undefined };
    if (error.name === 'AbortError' || error.name === 'TimeoutError') return { kind: 'timeout', message: error.message, code: undefined };
    return { kind: 'internal', message: error.message, code: undefined };
  }
  return { kind: 'internal', message: String(error), code: undefined };
}

/** chdb raises errors of its own class carrying the same numeric `code` and a `type`. */
function isClickHouseShaped(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const { code, type } = error as { code?: unknown; type?: unknown };
  return typeof type === 'string' && (typeof code === 'string' || typeof code === 'number') && /^\d+$/.test(String(code));
}
