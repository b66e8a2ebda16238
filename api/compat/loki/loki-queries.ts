// The Loki endpoints' work for one tenant: LogQL and label queries run in
// ClickHouse through the query runner, rows shaped as Loki answers them
// (streams, matrix, vector, label lists, index stats and volume).
import { queryTable } from '../../../src/clickhouse/schema/ddl.ts';
import type { Result } from '../../../src/result.ts';
import { fail, ok } from '../../../src/result.ts';
import type { ApiError } from '../../http/api-error.ts';
import { invalidRequest } from '../../http/api-error.ts';
import type { RouteDeps } from '../../query/deps.ts';
import type { SqlParams } from '../../query/sql-params.ts';
import type { ScanStatement, Statement, TenantScan } from '../../query/tenant-scan.ts';
import type { TimeRange } from '../../query/time-range.ts';
import type { LogQuery, LogSelector, Matcher, MetricExpr } from './logql-ast.ts';
import { selectorsOf } from './logql-ast.ts';
import type { Grid, Scan } from './logql-sql.ts';
import { keepsLabels, logsSql, matchSql, metricSql, rawLogsSql } from './logql-sql.ts';
import { rowLabels } from './row-labels.ts';
import type { RawLogRow } from './row-labels.ts';
import { streamLabelNames, streamLabelSql, streamLabelsSql } from './otlp-labels.ts';

export type Labels = Readonly<Record<string, string>>;
/** An entry: time, line, and with categorize-labels its structured metadata and parsed labels. */
export type Entry = readonly [string, string] | readonly [string, string, { structuredMetadata?: Labels; parsed?: Labels }];
export interface Stream {
  readonly stream: Labels;
  readonly values: Entry[];
}
export interface Sample {
  readonly metric: Labels;
  readonly values: (readonly [number, string])[];
}
export interface InstantSample {
  readonly metric: Labels;
  readonly value: readonly [number, string];
}

/** Loki's stats.summary (what Grafana shows in the query inspector), from what Tenantry knows of a query. */
export function statsSummary(lines: number, bytes: number, seconds: number): Record<string, unknown> {
  return {
    summary: {
      bytesProcessedPerSecond: seconds > 0 ? Math.round(bytes / seconds) : 0,
      linesProcessedPerSecond: seconds > 0 ? Math.round(lines / seconds) : 0,
      totalBytesProcessed: bytes,
      totalLinesProcessed: lines,
      execTime: seconds,
      queueTime: 0,
      subqueries: 0,
      totalEntriesReturned: lines,
      splits: 0,
      shards: 0,
      totalPostFilterLines: lines,
      totalStructuredMetadataBytesProcessed: 0,
    },
  };
}

/**
 * Most bytes of one statement: ClickHouse refuses a statement longer than
 * max_query_size (256 KiB), and the runner appends its SETTINGS clause. A
 * query whose SQL would be longer (hundreds of label filters or matchers)
 * is the client's to shorten: a 400 naming `query`.
 */
export const maxStatementBytes = 200_000;

/** The statement, or a 400 when it is longer than ClickHouse takes. */
function bounded(statement: Statement): Result<Statement, ApiError> {
  const bytes = Buffer.byteLength(statement.sql);
  if (bytes <= maxStatementBytes) return ok(statement);
  return fail(
    invalidRequest(
      `invalid 'query' parameter: the query is too complex (its statement would take ${bytes} bytes, more than ${maxStatementBytes}): use fewer matchers, filters or selectors`,
    ),
  );
}

/** Rows of a statement built from a client's query, once it is known to fit. */
async function rowsOf<T>(deps: RouteDeps, built: Statement, many = false): Promise<Result<T[], ApiError>> {
  const statement = bounded(built);
  if (!statement.ok) return statement;
  return many ? deps.runner.manyRows<T>(statement.value) : deps.runner.rows<T>(statement.value);
}

/** The logs table and the statement's tenant predicate, as the LogQL translation reads them. */
function scanOf(deps: RouteDeps, statement: ScanStatement): Scan {
  return { table: queryTable(deps.schema, 'logs'), tenantIs: statement.tenantIs() };
}

/** The part of [startNs, endNs] the tenant may see (retention, maxQueryDays). */
export function visibleWindow(scan: TenantScan, startNs: bigint, endNs: bigint): Result<TimeRange, ApiError> {
  if (endNs < startNs) return fail(invalidRequest('end timestamp must not be before or equal to start time'));
  return scan.window({ startNs, endNs });
}

/** Loki's rule: a selector needs one matcher that does not match the empty string. */
export function checkSelector(matchers: readonly Matcher[]): string | undefined {
  const matchesEmpty = (m: Matcher): boolean => {
    if (m.op === '=') return m.value === '';
    if (m.op === '!=') return m.value !== '';
    let re: RegExp;
    try {
      re = new RegExp(`^(?:${m.value})$`, 'u');
    } catch {
      return false;
    }
    return m.op === '=~' ? re.test('') : !re.test('');
  };
  if (matchers.some((m) => !matchesEmpty(m))) return undefined;
  return 'parse error : queries require at least one regexp or equality matcher that does not have an empty-compatible value. For instance, app=~".*" does not meet this requirement, but app=~".+" will';
}

/** The selectors' check over a whole query. */
export function checkQuery(query: LogQuery): string | undefined {
  const selectors: LogSelector[] = query.kind === 'logs' ? [query.selector] : selectorsOf(query.expr);
  for (const s of selectors) {
    const problem = checkSelector(s.matchers);
    if (problem !== undefined) return problem;
  }
  return undefined;
}

interface LogRow {
  ts: string;
  body: string;
  labels: Record<string, string>;
  base_keys: string[];
}

/** Splits an entry's labels as Loki 3 does for `X-Loki-Response-Encoding-Flags: categorize-labels`. */
function categorized(row: LogRow): { stream: Labels; extra: { structuredMetadata?: Labels; parsed?: Labels } } {
  const stream: Record<string, string> = {};
  const metadata: Record<string, string> = {};
  const parsed: Record<string, string> = {};
  const base = new Set(row.base_keys);
  for (const [k, v] of Object.entries(row.labels)) {
    if (streamLabelNames.includes(k)) stream[k] = v;
    else if (base.has(k)) metadata[k] = v;
    else parsed[k] = v;
  }
  const extra = {
    ...(Object.keys(metadata).length > 0 ? { structuredMetadata: metadata } : {}),
    ...(Object.keys(parsed).length > 0 ? { parsed } : {}),
  };
  return { stream, extra };
}

/** The rows of a log query with their labels: built in Node when no parser needs them in SQL. */
async function logRows(
  deps: RouteDeps,
  scan: TenantScan,
  selector: LogSelector,
  window: TimeRange,
  limit: number,
  direction: 'forward' | 'backward',
): Promise<Result<LogRow[], ApiError>> {
  const statement = scan.statement();
  const { params } = statement;
  if (keepsLabels(selector)) {
    const raw = await rowsOf<RawLogRow>(
      deps,
      statement.finish(rawLogsSql(params, scanOf(deps, statement), selector, window.startNs, window.endNs, limit, direction)),
    );
    if (!raw.ok) return raw;
    return ok(
      raw.value.map((r) => {
        const labels = rowLabels(r);
        return { ts: r.ts, body: r.body, labels, base_keys: Object.keys(labels) };
      }),
    );
  }
  return rowsOf<LogRow>(deps, statement.finish(logsSql(params, scanOf(deps, statement), selector, window.startNs, window.endNs, limit, direction)));
}

/** A log query: streams of entries, `limit` entries in all, in the direction's order. */
export async function queryStreams(
  deps: RouteDeps,
  scan: TenantScan,
  selector: LogSelector,
  window: TimeRange,
  limit: number,
  direction: 'forward' | 'backward',
  categorize = false,
): Promise<Result<{ streams: Stream[]; lines: number; bytes: number }, ApiError>> {
  const rows = await logRows(deps, scan, selector, window, limit, direction);
  if (!rows.ok) return rows;
  const streams = new Map<string, Stream>();
  let bytes = 0;
  for (const row of rows.value) {
    const split = categorize ? categorized(row) : { stream: row.labels, extra: undefined };
    const key = JSON.stringify(split.stream);
    let stream = streams.get(key);
    if (stream === undefined) {
      stream = { stream: split.stream, values: [] };
      streams.set(key, stream);
    }
    stream.values.push(split.extra === undefined ? [row.ts, row.body] : [row.ts, row.body, split.extra]);
    bytes += Buffer.byteLength(row.body);
  }
  return ok({ streams: [...streams.values()], lines: rows.value.length, bytes });
}

interface MetricRow {
  labels: Record<string, string>;
  k: string;
  v: number;
}

/** Go's strconv.FormatFloat(v, 'f', -1, 64), as Loki prints sample values. */
export function formatValue(v: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (!Number.isFinite(v)) return v > 0 ? '+Inf' : '-Inf';
  const text = String(v);
  if (!text.includes('e')) return text;
  return v.toFixed(20).replace(/\.?0+$/, '');
}

/** A metric query over a grid: per label set, its points in time order. */
export async function querySamples(deps: RouteDeps, scan: TenantScan, expr: MetricExpr, grid: Grid): Promise<Result<Sample[], ApiError>> {
  const statement = scan.statement();
  const sql = `${metricSql(statement.params, scanOf(deps, statement), expr, grid)}\nORDER BY k`;
  const rows = await rowsOf<MetricRow>(deps, statement.finish(sql), true);
  if (!rows.ok) return rows;
  const series = new Map<string, Sample>();
  for (const row of rows.value) {
    const key = JSON.stringify(row.labels);
    let sample = series.get(key);
    if (sample === undefined) {
      sample = { metric: row.labels, values: [] };
      series.set(key, sample);
    }
    const t = grid.startNs + grid.stepNs * BigInt(row.k);
    sample.values.push([Number(t) / 1e9, formatValue(row.v)]);
  }
  return ok([...series.values()]);
}

/** Matchers as WHERE terms over stream labels (label endpoints' `query` / `match[]`). */
function streamWhere(params: SqlParams, matchers: readonly Matcher[]): string[] {
  return matchers.map((m) => matchSql(params, streamLabelSql(m.name) ?? "''", m));
}

function windowWhere(statement: ScanStatement, window: TimeRange): string[] {
  const ns = (v: bigint): string => `fromUnixTimestamp64Nano(toInt64(${statement.bind(v.toString(), 'Int64')}))`;
  return [statement.tenantIs(), `timestamp >= ${ns(window.startNs)}`, `timestamp <= ${ns(window.endNs)}`];
}

/** Stream label names seen in the window (optionally only in streams a selector matches). */
export async function labelNames(deps: RouteDeps, scan: TenantScan, window: TimeRange, matchers: readonly Matcher[]): Promise<Result<string[], ApiError>> {
  const statement = scan.statement();
  const { params } = statement;
  const where = [...windowWhere(statement, window), ...streamWhere(params, matchers)];
  const sql = `SELECT groupUniqArrayArray(mapKeys(${streamLabelsSql()})) AS names FROM ${queryTable(deps.schema, 'logs')} WHERE ${where.join(' AND ')}`;
  const rows = await rowsOf<{ names: string[] }>(deps, statement.finish(sql));
  if (!rows.ok) return rows;
  return ok((rows.value[0]?.names ?? []).sort());
}

/** Values of one stream label in the window. */
export async function labelValues(
  deps: RouteDeps,
  scan: TenantScan,
  name: string,
  window: TimeRange,
  matchers: readonly Matcher[],
): Promise<Result<string[], ApiError>> {
  const value = streamLabelSql(name);
  if (value === undefined) return ok([]);
  const statement = scan.statement();
  const { params } = statement;
  const where = [...windowWhere(statement, window), ...streamWhere(params, matchers), `${value} != ''`];
  const sql = `SELECT DISTINCT ${value} AS value FROM ${queryTable(deps.schema, 'logs')} WHERE ${where.join(' AND ')} ORDER BY value LIMIT 100000`;
  const rows = await rowsOf<{ value: string }>(deps, statement.finish(sql));
  if (!rows.ok) return rows;
  return ok(rows.value.map((r) => r.value));
}

/** Distinct stream label sets matching any of the selectors. */
export async function series(
  deps: RouteDeps,
  scan: TenantScan,
  window: TimeRange,
  selectors: readonly (readonly Matcher[])[],
): Promise<Result<Labels[], ApiError>> {
  const statement = scan.statement();
  const { params } = statement;
  const any = selectors.map((ms) => {
    const w = streamWhere(params, ms);
    return w.length === 0 ? 'true' : `(${w.join(' AND ')})`;
  });
  const where = [...windowWhere(statement, window), any.length === 0 ? 'true' : `(${any.join(' OR ')})`];
  const sql = `SELECT DISTINCT mapSort(${streamLabelsSql()}) AS labels FROM ${queryTable(deps.schema, 'logs')} WHERE ${where.join(' AND ')} LIMIT 100000`;
  const rows = await rowsOf<{ labels: Record<string, string> }>(deps, statement.finish(sql));
  if (!rows.ok) return rows;
  return ok(rows.value.map((r) => r.labels));
}

/** /index/stats: streams, entries and line bytes of the selector's streams in the window (chunks: Tenantry has none, one per stream). */
export async function indexStats(
  deps: RouteDeps,
  scan: TenantScan,
  window: TimeRange,
  matchers: readonly Matcher[],
): Promise<Result<{ streams: number; chunks: number; bytes: number; entries: number }, ApiError>> {
  const statement = scan.statement();
  const { params } = statement;
  const where = [...windowWhere(statement, window), ...streamWhere(params, matchers)];
  const sql = `SELECT uniqExact(${streamLabelsSql()}) AS streams, count() AS entries, sum(length(body)) AS bytes FROM ${queryTable(deps.schema, 'logs')} WHERE ${where.join(' AND ')}`;
  const rows = await rowsOf<{ streams: string | number; entries: string | number; bytes: string | number }>(deps, statement.finish(sql));
  if (!rows.ok) return rows;
  const row = rows.value[0];
  const streams = Number(row?.streams ?? 0);
  return ok({ streams, chunks: streams, bytes: Number(row?.bytes ?? 0), entries: Number(row?.entries ?? 0) });
}

/** /index/volume: line bytes per combination of the target labels (default: the selector's label names), largest first. */
export async function volume(
  deps: RouteDeps,
  scan: TenantScan,
  window: TimeRange,
  matchers: readonly Matcher[],
  targets: readonly string[],
  limit: number,
): Promise<Result<InstantSample[], ApiError>> {
  const statement = scan.statement();
  const { params } = statement;
  const names = (targets.length > 0 ? targets : [...new Set(matchers.map((m) => m.name))]).filter((n) => streamLabelNames.includes(n));
  const where = [...windowWhere(statement, window), ...streamWhere(params, matchers)];
  const group = `mapSort(mapFilter((k, v) -> k IN ${params.bind(names, 'Array(String)')}, ${streamLabelsSql()}))`;
  const sql = `SELECT ${group} AS labels, sum(length(body)) AS bytes FROM ${queryTable(deps.schema, 'logs')} WHERE ${where.join(' AND ')}
GROUP BY labels ORDER BY bytes DESC LIMIT ${params.bind(limit, 'UInt64')}`;
  const rows = await rowsOf<{ labels: Record<string, string>; bytes: string | number }>(deps, statement.finish(sql));
  if (!rows.ok) return rows;
  const t = Number(window.endNs / 1_000_000_000n);
  return ok(rows.value.map((r) => ({ metric: r.labels, value: [t, String(r.bytes)] as const })));
}

/** /detected_labels: each stream label with values in the window and how many distinct values it has (exact; Loki estimates). */
export async function detectedLabels(
  deps: RouteDeps,
  scan: TenantScan,
  window: TimeRange,
  matchers: readonly Matcher[],
): Promise<Result<{ label: string; cardinality: number }[], ApiError>> {
  const statement = scan.statement();
  const { params } = statement;
  const where = [...windowWhere(statement, window), ...streamWhere(params, matchers)];
  const sql = `SELECT pair.1 AS label, toUInt64(uniqExact(pair.2)) AS cardinality FROM (
  SELECT arrayJoin(arrayZip(mapKeys(s), mapValues(s))) AS pair FROM (
    SELECT ${streamLabelsSql()} AS s FROM ${queryTable(deps.schema, 'logs')} WHERE ${where.join(' AND ')}))
GROUP BY label ORDER BY label`;
  const rows = await rowsOf<{ label: string; cardinality: string | number }>(deps, statement.finish(sql));
  if (!rows.ok) return rows;
  return ok(rows.value.map((r) => ({ label: r.label, cardinality: Number(r.cardinality) })));
}
