// The shared shape of the logs and traces queries: a tenant, a time window
// and a keyset page over (timestamp, ids…) sorted newest first. The cursor
// and page slicing are shared with the tenant list (keyset by id).
import type { Result } from '../../../src/result.ts';
import { fail, ok } from '../../../src/result.ts';
import type { ApiError } from '../../http/api-error.ts';
import { invalidRequest } from '../../http/api-error.ts';
import { defaultLimit } from '../../http/pagination.ts';
import { decodeCursor, encodeCursor, filterDigest } from './cursor.ts';
import type { Cursor } from './cursor.ts';
import type { SqlParams } from '../../query/sql-params.ts';
import type { ScanStatement, TenantScan } from '../../query/tenant-scan.ts';
import { resolveRange } from '../../query/time-range.ts';
import type { TimeRange } from '../../query/time-range.ts';

export interface PageInput {
  readonly startTime: number;
  readonly endTime?: number;
  readonly pagination?: { readonly limit?: number; readonly page?: string };
}

/** A keyset page: its size, the digest its cursors carry, and where it starts. */
export interface KeysetPage {
  readonly limit: number;
  /** Most bytes the page's rows may take in the answer (TENANTRY_API_PAGE_MAX_BYTES); records pages only. */
  readonly maxBytes?: number;
  readonly digest: string;
  readonly cursor: Cursor | undefined;
  /** Set when endTime was omitted: the frozen end carried by every cursor of this walk. */
  readonly frozenEndNs: string | undefined;
}

export interface PagePlan extends KeysetPage {
  readonly range: TimeRange;
}

/** The cursor a request continues from (undefined on the first page), made for the same `digest`. */
export function pageCursor(page: string | undefined, digest: string, keyLength: number): Result<Cursor | undefined, ApiError> {
  return page === undefined ? ok(undefined) : decodeCursor(page, digest, keyLength);
}

/** Resolves the window (within the scan's retention and range limit), the page size (rows and bytes) and the cursor of a records query. */
export function planPage(route: string, scan: TenantScan, input: PageInput, keyLength: number, nowNs: bigint, maxBytes: number): Result<PagePlan, ApiError> {
  const { pagination, ...filters } = input;
  const digest = filterDigest([route, scan.tenantId, filters]);
  const cursor = pageCursor(pagination?.page, digest, keyLength + 1);
  if (!cursor.ok) return cursor;
  if (cursor.value !== undefined && !/^\d{1,19}$/.test(cursor.value.key[0] ?? ''))
    return fail(invalidRequest('pagination page is not a cursor returned by this API'));
  const frozenEnd = input.endTime === undefined ? (cursor.value?.frozenEndNs === undefined ? nowNs : BigInt(cursor.value.frozenEndNs)) : undefined;
  const range = resolveRange(input.startTime, input.endTime, frozenEnd ?? nowNs);
  if (!range.ok) return range;
  const visible = scan.window(range.value);
  if (!visible.ok) return visible;
  return ok({ range: visible.value, limit: pagination?.limit ?? defaultLimit, maxBytes, digest, cursor: cursor.value, frozenEndNs: frozenEnd?.toString() });
}

/**
 * WHERE conditions for the tenant, the window and the cursor position. The
 * timestamp bound comes first and alone so the primary key prunes granules;
 * the tuple comparison then settles ties.
 */
export function windowConditions(statement: ScanStatement, plan: PagePlan, idColumns: readonly string[]): string[] {
  const { params } = statement;
  const conditions = [
    statement.tenantIs(),
    `timestamp >= fromUnixTimestamp64Nano(${params.bind(plan.range.startNs.toString(), 'Int64')})`,
    `timestamp < fromUnixTimestamp64Nano(${params.bind(plan.range.endNs.toString(), 'Int64')})`,
  ];
  if (plan.cursor !== undefined) {
    const [ts, ...ids] = plan.cursor.key;
    const at = `fromUnixTimestamp64Nano(${params.bind(ts, 'Int64')})`;
    conditions.push(`timestamp <= ${at}`);
    const boundIds = ids.map((id) => params.bind(id, 'String'));
    conditions.push(`(timestamp, ${idColumns.join(', ')}) < (${at}, ${boundIds.join(', ')})`);
  }
  return conditions;
}

/** What a row of a byte-bounded page carries besides its own columns (see byteBoundedPage). */
export interface BoundedRow {
  readonly page_fetched: number;
}

/**
 * Wraps the SELECT of one page (`inner`: newest first, `LIMIT limit + 1`,
 * with a `row_bytes` column estimating each row's bytes in the answer and
 * the sort key as `order`) so that only the rows that fit the plan's byte
 * budget leave ClickHouse: a running sum over the fetched rows keeps the
 * leading rows whose total stays within it. The first row always goes (a
 * walk must move on, and one record over the budget is still served, alone
 * on its page). Each row also carries `page_fetched`, how many rows `inner`
 * fetched: more than returned means the page stopped early.
 */
export function byteBoundedPage(params: SqlParams, plan: KeysetPage, inner: string, columns: readonly string[], order: string): string {
  const budget = params.bind(plan.maxBytes ?? Number.MAX_SAFE_INTEGER, 'UInt64');
  return `SELECT ${columns.join(', ')}, page_fetched FROM (
    SELECT *, sum(row_bytes) OVER (ORDER BY ${order} ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS bytes_before,
      toUInt32(count() OVER ()) AS page_fetched
    FROM (${inner})
  ) WHERE bytes_before = 0 OR bytes_before + row_bytes <= ${budget}
  ORDER BY ${order}`;
}

/** SQL for the bytes of a map of strings in an answer: keys, values and JSON punctuation. */
export const mapBytes = (column: string): string => `(arraySum(k -> length(k) + 4, mapKeys(${column})) + arraySum(v -> length(v) + 3, mapValues(${column})))`;

/**
 * The rows of this page and the cursor for the next, from the fetched rows:
 * `limit + 1` of them, or, on a byte-bounded page, the rows within the budget
 * and how many were fetched.
 */
export function finishPage<R>(
  plan: KeysetPage,
  rows: readonly R[],
  keyOf: (row: R) => string[],
  fetched = rows.length,
): { rows: readonly R[]; next: string | null } {
  const pageRows = rows.slice(0, plan.limit);
  const last = pageRows[pageRows.length - 1];
  if (fetched <= pageRows.length || last === undefined) return { rows: pageRows, next: null };
  return {
    rows: pageRows,
    next: encodeCursor(plan.digest, { key: keyOf(last), ...(plan.frozenEndNs === undefined ? {} : { frozenEndNs: plan.frozenEndNs }) }),
  };
}

/** Merges attribute maps; later maps win on equal keys (item over scope over resource). */
export function mergeAttributes(...maps: readonly (Readonly<Record<string, string>> | undefined)[]): Record<string, string> {
  return Object.assign({}, ...maps.filter((m) => m !== undefined)) as Record<string, string>;
}
