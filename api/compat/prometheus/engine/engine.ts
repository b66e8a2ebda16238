// The PromQL engine's front door: parse a query, say which samples it needs,
// and answer an instant or a range query over a SampleSource as Prometheus
// 3.16 does without feature flags. Every expected failure is a Result in
// Prometheus' terms (bad_data, execution, timeout, canceled, …).
import type { Result } from '../../../../src/result.ts';
import { fail, ok } from '../../../../src/result.ts';
import type { PromError } from '../prom-envelope.ts';
import { badData, execution } from '../prom-envelope.ts';
import type { EvalSeries } from './eval-series.ts';
import { dropMetricName, EvalFailure, labelsKey, stop } from './eval-series.ts';
import { abortError, Evaluator, failOnSameLabels, mergeSameLabels, QueryState } from './evaluator.ts';
import type { EvaluationInput } from './evaluator.ts';
import { functionTable } from './functions/function-table.ts';
import type { FunctionDef } from './functions/function-types.ts';
import { compareLabelSets } from './label-order.ts';
import { parseExpr } from './parse.ts';
import type { Expr, MatrixSelector, SubqueryExpr, VectorSelector } from './promql-ast.ts';
import { typeOf } from './promql-ast.ts';
import type { SampleSource, StoredSeries } from './sample-source.ts';
import { atTime, selectRanges as selectorRanges } from './select-ranges.ts';
import type { SelectorRange } from './select-ranges.ts';
import { unwrap } from './step-invariant.ts';
import type { QueryValue, ResultSeries } from './values.ts';

/** A parsed query: its text (for positions in messages) and its expression. */
export interface ParsedQuery {
  readonly text: string;
  readonly expr: Expr;
}

export interface QueryOptions {
  /** Prometheus' --query.lookback-delta (default 5m). */
  readonly lookbackMs?: number;
  /** Prometheus' --query.max-samples (default 50,000,000). */
  readonly maxSamples?: number;
  /** Aborted when the query is cancelled or times out (a reason named TimeoutError answers `timeout`). */
  readonly signal?: AbortSignal;
  /** A subquery's step when left out (Prometheus' global evaluation interval, default 1m). */
  readonly subqueryStepMs?: number;
  /** Prometheus' promql-delayed-name-removal feature flag (default off, as Prometheus 3.16). */
  readonly delayedNameRemoval?: boolean;
  /** The function library (default: functionTable); tests may pass their own. */
  readonly functions?: ReadonlyMap<string, FunctionDef>;
}

export interface QueryAnswer {
  readonly value: QueryValue;
  /** Prometheus' warnings and infos, each starting "PromQL warning:" or "PromQL info:". */
  readonly annotations: string[];
}

const defaultLookbackMs = 5 * 60_000;
const defaultMaxSamples = 50_000_000;
const defaultSubqueryStepMs = 60_000;

/** Parses a query as Prometheus 3.16 does without feature flags. */
export function parseQuery(text: string, functions: ReadonlyMap<string, FunctionDef> = functionTable): Result<ParsedQuery, PromError> {
  const expr = parseExpr(text, functions);
  return expr.ok ? ok({ text, expr: expr.value }) : expr;
}

/** The samples each selector of the query needs, for the caller to clamp or refuse before anything is read. */
export function selectRanges(query: ParsedQuery, start: number, end: number, lookbackMs = defaultLookbackMs): SelectorRange[] {
  return selectorRanges(query.expr, start, end, lookbackMs);
}

async function fetchAll(
  source: SampleSource,
  ranges: readonly SelectorRange[],
  signal: AbortSignal,
): Promise<Result<Map<VectorSelector, readonly StoredSeries[]>, PromError>> {
  // Selectors written the same way over the same range are read once. A source that reads several selectors
  // together gets them all (one statement for the query); otherwise one selector after another: a query takes one
  // of its tenant's query slots at a time (limits.maxConcurrentQueries counts statements), and the embedded store
  // runs one statement at a time anyway.
  const keys = ranges.map((r) => JSON.stringify(r.request));
  const unique = new Map<string, SelectorRange['request']>();
  for (const [i, r] of ranges.entries()) unique.set(keys[i] ?? '', r.request);
  const seen = new Map<string, readonly StoredSeries[]>();
  if (source.selectAll !== undefined && unique.size > 1) {
    const answers = await source.selectAll([...unique.values()], signal);
    if (!answers.ok) return answers;
    [...unique.keys()].forEach((key, i) => {
      seen.set(key, answers.value[i] ?? []);
    });
  } else {
    for (const [key, request] of unique) {
      const answer = await source.select(request, signal);
      if (!answer.ok) return answer;
      seen.set(key, answer.value);
    }
  }
  const fetched = new Map<VectorSelector, readonly StoredSeries[]>();
  ranges.forEach((r, i) => {
    fetched.set(r.selector, seen.get(keys[i] ?? '') ?? []);
  });
  if (signal.aborted) return fail(abortError(signal));
  return ok(fetched);
}

async function run(
  source: SampleSource,
  query: ParsedQuery,
  start: number,
  end: number,
  interval: number,
  options: QueryOptions,
  shape: (ev: Evaluator) => Promise<QueryValue>,
): Promise<Result<QueryAnswer, PromError>> {
  const signal = options.signal ?? new AbortController().signal;
  const lookbackMs = options.lookbackMs ?? defaultLookbackMs;
  const fetched = await fetchAll(source, selectRanges(query, start, end, lookbackMs), signal);
  if (!fetched.ok) return fetched;
  const input: EvaluationInput = {
    text: query.text,
    functions: options.functions ?? functionTable,
    fetched: fetched.value,
    queryStart: start,
    queryEnd: end,
    lookbackMs,
    maxSamples: options.maxSamples ?? defaultMaxSamples,
    subqueryStepMs: options.subqueryStepMs ?? defaultSubqueryStepMs,
    delayedNameRemoval: options.delayedNameRemoval ?? false,
    signal,
  };
  const state = new QueryState();
  try {
    const value = await shape(new Evaluator(input, state, { start, end, interval }));
    return ok({ value, annotations: [...state.annotations.values(), ...state.monotonicity.infos()] });
  } catch (e) {
    if (e instanceof EvalFailure) return fail(e.error);
    throw e;
  }
}

/** Names removed from series marked for it, then equal label sets merged or refused (Prometheus' cleanupMetricLabels). */
function cleanup(series: EvalSeries[]): EvalSeries[] {
  for (const s of series)
    if (s.dropName) {
      s.labels = dropMetricName(s.labels);
      s.dropName = false;
    }
  return mergeSameLabels(series);
}

const toResult = (s: EvalSeries): ResultSeries => ({ labels: s.labels, floats: s.floats, histograms: s.histograms });

const sortedMatrix = (series: readonly EvalSeries[]): ResultSeries[] => series.map(toResult).sort((a, b) => compareLabelSets(a.labels, b.labels));

/** A range selector or subquery asked for by itself: its raw points in (t - range, t] (instant queries only). */
async function rangeValue(ev: Evaluator, e: MatrixSelector | SubqueryExpr, t: number): Promise<EvalSeries[]> {
  if (e.kind === 'subquery') return cleanup(await ev.subquery(e));
  const at = atTime(e.selector.at, ev.input.queryStart, ev.input.queryEnd);
  const end = (at ?? t) - e.selector.offsetMs;
  const out: EvalSeries[] = [];
  for (const s of ev.input.fetched.get(e.selector) ?? []) {
    await ev.tick();
    const p = ev.state.pointsOf(s);
    const floats = p.floats.filter((x) => x.t > end - e.rangeMs && x.t <= end);
    const histograms = p.histograms.filter((x) => x.t > end - e.rangeMs && x.t <= end);
    ev.hold(floats.length + histograms.length);
    if (floats.length + histograms.length > 0) out.push({ labels: s.labels, dropName: false, floats, histograms });
  }
  return out;
}

/** An instant query at `t` (Unix ms): a vector, scalar, string or (for a range selector or subquery) matrix. */
export async function instantQuery(source: SampleSource, query: ParsedQuery, t: number, options: QueryOptions = {}): Promise<Result<QueryAnswer, PromError>> {
  return run(source, query, t, t, 1, options, async (ev): Promise<QueryValue> => {
    const e = unwrap(query.expr);
    const type = typeOf(e);
    if (e.kind === 'string') return { resultType: 'string', result: { t, s: e.value } };
    if (e.kind === 'matrix' || e.kind === 'subquery') return { resultType: 'matrix', result: sortedMatrix(await rangeValue(ev, e, t)) };
    const series = await ev.eval(query.expr);
    if (type === 'scalar') return { resultType: 'scalar', result: { t, f: series[0]?.floats[0]?.f ?? NaN } };
    for (const s of series)
      if (s.dropName) {
        s.labels = dropMetricName(s.labels);
        s.dropName = false;
      }
    const vector = series.map((s) => {
      const h = s.histograms[0];
      return h === undefined ? { labels: s.labels, t, f: s.floats[0]?.f ?? NaN } : { labels: s.labels, t, f: 0, h: h.h };
    });
    failOnSameLabels(vector);
    return { resultType: 'vector', result: vector };
  });
}

/** A range query over [start, end] every `step` ms: always a matrix sorted by labels. */
export async function rangeQuery(
  source: SampleSource,
  query: ParsedQuery,
  start: number,
  end: number,
  step: number,
  options: QueryOptions = {},
): Promise<Result<QueryAnswer, PromError>> {
  const type = typeOf(query.expr);
  if (type !== 'scalar' && type !== 'vector')
    return fail(badData(`invalid expression type "${type === 'matrix' ? 'range vector' : type}" for range query, must be Scalar or instant Vector`));
  if (step <= 0) return fail(badData('zero or negative query resolution step widths are not accepted. Try a positive integer'));
  return run(source, query, start, end, step, options, async (ev): Promise<QueryValue> => {
    const series = cleanup(await ev.eval(query.expr));
    const seen = new Set<string>();
    for (const s of series) {
      const key = labelsKey(s.labels);
      if (seen.has(key)) stop(execution('vector cannot contain metrics with the same labelset'));
      seen.add(key);
    }
    return { resultType: 'matrix', result: sortedMatrix(series) };
  });
}
