// Evaluates a parsed PromQL expression for an instant or range query: the
// tenant's catalog, one SELECT built by promql-sql.ts, and the rows shaped
// as Prometheus' vector, matrix or scalar result.
import type { Result } from '../../../src/result.ts';
import { fail, ok } from '../../../src/result.ts';
import type { RouteDeps } from '../../v1/deps.ts';
import { SqlParams } from '../../v1/query/sql-params.ts';
import type { PromError } from './prom-envelope.ts';
import { execution, fromApiError } from './prom-envelope.ts';
import { formatSampleValue, formatTimestamp, parseStoreFloat } from './prom-float.ts';
import type { Expr, MatrixSelector, VectorSelector } from './promql-ast.ts';
import { compile, matrixSql } from './promql-sql.ts';
import type { Steps } from './promql-sql.ts';
import { readCatalog } from './series-source.ts';
import { compareLabelSets } from './engine/label-order.ts';
import type { SourceContext } from './series-source.ts';

/** Most series one query may return. */
export const maxResultSeries = 10_000;

/**
 * Settings of the statements evaluating PromQL. These statements are many
 * levels of small subqueries, and ClickHouse's time goes to planning them,
 * not to reading the samples; merging each level's expressions into the
 * next took about 15% of that (bench:promql's five queries 0.8-0.95x
 * without it, same answers). It only saves steps when blocks are many.
 */
export const promqlSettings = { query_plan_merge_expressions: 0 } as const;

export type Sample = readonly [number, string];
export interface VectorSample { readonly metric: Record<string, string>; readonly value: Sample }
export interface MatrixSeries { readonly metric: Record<string, string>; readonly values: Sample[] }

export type QueryData =
  | { readonly resultType: 'vector'; readonly result: VectorSample[] }
  | { readonly resultType: 'matrix'; readonly result: MatrixSeries[] }
  | { readonly resultType: 'scalar'; readonly result: Sample };

export interface Evaluation {
  readonly tenantId: string;
  /** Start of the tenant's metrics retention (Unix ms): nothing older is read. */
  readonly visibleFromMs: number;
}

/** The selectors of an expression and how far back each reads. */
function selectors(e: Expr, out: { sel: VectorSelector; windowMs: number }[], lookbackMs: number): void {
  switch (e.kind) {
    case 'vector': out.push({ sel: e, windowMs: lookbackMs }); break;
    case 'matrix': out.push({ sel: e.selector, windowMs: e.rangeMs }); break;
    case 'range_call': out.push({ sel: e.arg.selector, windowMs: e.arg.rangeMs }); break;
    case 'vector_call': selectors(e.arg, out, lookbackMs); break;
    case 'aggregate': selectors(e.expr, out, lookbackMs); break;
    case 'binary': selectors(e.lhs, out, lookbackMs); selectors(e.rhs, out, lookbackMs); break;
    case 'negate': selectors(e.expr, out, lookbackMs); break;
    case 'number': break;
  }
}

/** The source context: the catalog read over every selector's window. */
async function sourceFor(deps: RouteDeps, ev: Evaluation, e: Expr, steps: Steps): Promise<Result<SourceContext, PromError>> {
  const sels: { sel: VectorSelector; windowMs: number }[] = [];
  selectors(e, sels, steps.lookbackMs);
  const endMs = steps.startMs + (steps.count - 1) * steps.stepMs;
  const fromMs = Math.max(ev.visibleFromMs, Math.min(...sels.map((s) => steps.startMs - s.sel.offsetMs - s.windowMs)));
  const toMs = Math.max(...sels.map((s) => endMs - s.sel.offsetMs));
  const catalog = sels.length === 0 || toMs < fromMs ? ok({ metrics: [] }) : await readCatalog(deps.runner, deps.schema, ev.tenantId, fromMs, toMs);
  if (!catalog.ok) return fail(fromApiError(catalog.error));
  return ok({ schema: deps.schema, params: new SqlParams(), tenantId: ev.tenantId, catalog: catalog.value, visibleFromMs: ev.visibleFromMs });
}

type LabelPairs = readonly (readonly [string, string])[] | Readonly<Record<string, string>>;

/** Labels as the store returns an Array(Tuple(String, String)) → (name, value) pairs in the store's order. */
function pairsOf(labels: LabelPairs): (readonly [string, string])[] {
  const pairs = Array.isArray(labels) ? labels as readonly (readonly [string, string])[] : Object.values(labels as Record<string, unknown>) as unknown as readonly (readonly [string, string])[];
  return pairs.map((pair) => (Array.isArray(pair) ? pair : Object.values(pair as unknown as Record<string, string>) as [string, string]));
}

/** (name, value) pairs → a Prometheus metric object. */
function metricOf(pairs: readonly (readonly [string, string])[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of pairs) out[name] = value;
  return out;
}

interface SeriesRow { labels: (readonly [string, string])[]; points: (readonly [number, string])[] }

/** Rows with their labels as pairs, sorted by them here rather than by an ORDER BY (which took the statement about 5 ms more). */
function byLabels<T extends { labels: LabelPairs }>(rows: T[]): { row: T; pairs: (readonly [string, string])[] }[] {
  return rows.map((row) => ({ row, pairs: pairsOf(row.labels) })).sort((x, y) => compareLabelSets(x.pairs, y.pairs));
}

const tooMany = (): PromError => execution(`the query selects more than ${maxResultSeries} series: narrow its selectors`);

/** Evaluates an instant-vector or scalar expression over the steps. */
export async function evaluateSteps(deps: RouteDeps, ev: Evaluation, e: Expr, steps: Steps, instant: boolean, topOrder?: 'asc' | 'desc'): Promise<Result<QueryData, PromError>> {
  const source = await sourceFor(deps, ev, e, steps);
  if (!source.ok) return source;
  const compiled = compile(source.value, steps, e);
  const timeOf = (k: number): number => formatTimestamp(steps.startMs + k * steps.stepMs);
  if (compiled.type === 'scalar') {
    const rows = await deps.runner.rows<{ v: string }>(`SELECT toString(${compiled.sql}) AS v`, source.value.params);
    if (!rows.ok) return fail(fromApiError(rows.error));
    const v = formatSampleValue(parseStoreFloat(rows.value[0]?.v ?? 'nan'));
    if (instant) return ok({ resultType: 'scalar', result: [timeOf(0), v] });
    return ok({ resultType: 'matrix', result: [{ metric: {}, values: Array.from({ length: steps.count }, (_, k) => [timeOf(k), v] as const) }] });
  }
  const sql = `SELECT labels, arraySort(x -> x.1, groupArray((toUInt32(k), toString(v)))) AS points FROM (${compiled.sql})
    GROUP BY labels LIMIT ${maxResultSeries + 1}`;
  const rows = await deps.runner.manyRows<SeriesRow>(sql, source.value.params, promqlSettings);
  if (!rows.ok) return fail(fromApiError(rows.error));
  if (rows.value.length > maxResultSeries) return fail(tooMany());
  const series: MatrixSeries[] = [];
  for (const { row, pairs } of byLabels(rows.value)) {
    const values: Sample[] = [];
    let last = -1;
    for (const [k, v] of row.points.map((p) => (Array.isArray(p) ? p : Object.values(p) as [number, string]))) {
      if (k === last) return fail(execution('vector cannot contain metrics with the same labelset'));
      last = k;
      values.push([timeOf(k), formatSampleValue(parseStoreFloat(v))]);
    }
    series.push({ metric: metricOf(pairs), values });
  }
  if (!instant) return ok({ resultType: 'matrix', result: series });
  const vector = series.flatMap((s) => s.values.map((value) => ({ metric: s.metric, value })));
  if (topOrder !== undefined) {
    const num = (s: VectorSample): number => { const n = parseStoreFloat(s.value[1].toLowerCase().replace('+', '')); return Number.isNaN(n) ? (topOrder === 'desc' ? -Infinity : Infinity) : n; };
    vector.sort((a, b) => (topOrder === 'desc' ? num(b) - num(a) : num(a) - num(b)));
  }
  return ok({ resultType: 'vector', result: vector });
}

interface RawRow { labels: (readonly [string, string])[]; ts: (number | string)[]; vs: string[] }

/** An instant query of a range selector: the raw samples of each series in its window. */
export async function evaluateMatrix(deps: RouteDeps, ev: Evaluation, m: MatrixSelector, atMs: number): Promise<Result<QueryData, PromError>> {
  const steps: Steps = { startMs: atMs, stepMs: 1, count: 1, lookbackMs: 0 };
  const source = await sourceFor(deps, ev, m, steps);
  if (!source.ok) return source;
  const sql = `SELECT labels, ts, arrayMap(x -> toString(x), vs) AS vs FROM (${matrixSql(source.value, atMs, m)}) WHERE length(ts) > 0 LIMIT ${maxResultSeries + 1}`;
  const rows = await deps.runner.manyRows<RawRow>(sql, source.value.params, promqlSettings);
  if (!rows.ok) return fail(fromApiError(rows.error));
  if (rows.value.length > maxResultSeries) return fail(tooMany());
  return ok({
    resultType: 'matrix',
    result: byLabels(rows.value).map(({ row: r, pairs }) => ({ metric: metricOf(pairs), values: r.ts.map((t, i) => [formatTimestamp(Number(t)), formatSampleValue(parseStoreFloat(r.vs[i] ?? 'nan'))] as const) })),
  });
}
