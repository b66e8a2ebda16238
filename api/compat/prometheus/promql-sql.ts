// A PromQL expression → one ClickHouse SELECT, built per node. Every vector
// node is a relation of (labels Array(Tuple(String, String)) sorted by name,
// k UInt64 the step index, v Float64) holding only the steps where the
// series has a value; a scalar node is a SQL expression. Selectors group each
// series' samples into sorted arrays and evaluate every step with array
// functions (per-step arrays spread from per-sample ones: see gather); aggregations
// group by (labels, k); binary operators join two relations on (matching
// labels, k). Semantics follow Prometheus 2 (docs/prometheus.md): closed
// windows [t - range, t] and [t - lookback, t], stale markers ending a
// series at once, extrapolatedRate as in promql/functions.go.
import type { SqlParams } from '../../v1/query/sql-params.ts';
import type { Aggregate, Binary, Expr, MatrixSelector, RangeCall, VectorCall, VectorSelector } from './promql-ast.ts';
import { isComparison } from './promql-ast.ts';
import type { SourceContext } from './series-source.ts';
import { seriesSql } from './series-source.ts';
import { staleBitsLiteral } from './remote-write-scope.ts';

/** The steps of an evaluation: t_k = startMs + k * stepMs for k in [0, count). */
export interface Steps {
  readonly startMs: number;
  readonly stepMs: number;
  readonly count: number;
  readonly lookbackMs: number;
}

/** A compiled expression. Every supported scalar is a constant (number literals and operators on them), folded here. */
export type Compiled = { readonly type: 'scalar'; readonly sql: string; readonly value: number } | { readonly type: 'vector'; readonly sql: string };

/** Whether a value is Prometheus' stale marker (value.StaleNaN), by its bits. */
const isStale = (v: string): string => `reinterpretAsUInt64(${v}) = ${staleBitsLiteral}`;
const dropName = (labels: string): string => `arrayFilter(p -> p.1 != '__name__', ${labels})`;
const emptyLabels = "CAST([], 'Array(Tuple(String, String))')";

interface Compiler {
  readonly ctx: SourceContext;
  readonly steps: Steps;
  readonly p: SqlParams;
}

/** A number literal: bound like every value of the query (NaN and infinities, which a parameter cannot carry, as ClickHouse's keywords). */
function numberSql(p: SqlParams, value: number): string {
  if (Number.isNaN(value)) return 'nan';
  if (value === Infinity) return 'inf';
  if (value === -Infinity) return '-inf';
  return p.bind(value, 'Float64');
}

/** The time of step k (a SQL Int64 of Unix ms), shifted back by an offset. */
function stepTime(c: Compiler, k: string, offsetMs: number): string {
  return `(${c.p.bind(c.steps.startMs - offsetMs, 'Int64')} + toInt64(${k}) * ${c.p.bind(c.steps.stepMs, 'Int64')})`;
}

/** The series of a selector as (labels, ts Array(Int64), vs Array(Float64)) sorted by time, read over the steps' windows. */
function seriesArrays(c: Compiler, sel: VectorSelector, windowMs: number, dropStale: boolean): string {
  const fromMs = c.steps.startMs - sel.offsetMs - windowMs;
  const toMs = c.steps.startMs + (c.steps.count - 1) * c.steps.stepMs - sel.offsetMs;
  // One sample per timestamp, as a TSDB keeps (a row written twice, e.g. by a retried write, would skew rates).
  const unique = (sorted: string): string => `arrayFilter((x, prev) -> x.1 != prev, ${sorted}, arrayPushFront(arrayPopBack(tupleElement(${sorted}, 1)), toInt64(-9223372036854775808)))`;
  const kept = (sorted: string): string => (dropStale ? `arrayFilter(x -> NOT ${isStale('x.2')}, ${unique(sorted)})` : unique(sorted));
  return `SELECT labels, tupleElement(ss, 1) AS ts, tupleElement(ss, 2) AS vs FROM (${seriesSql(c.ctx, sel.matchers, fromMs, toMs, kept)})`;
}

/**
 * A relation (labels, k, v) computed from one: the new columns get fresh
 * names first, so no alias shadows the column its own expression reads.
 */
function relation(labels: string, k: string, v: string, from: string, where = ''): string {
  return `SELECT ls AS labels, ks AS k, vs_ AS v FROM (SELECT ${labels} AS ls, ${k} AS ks, ${v} AS vs_ FROM (${from})${where === '' ? '' : ` WHERE ${where}`})`;
}

/** A relation from per-series arrays of (k, present, value) built by `perStep`. */
function explode(series: string, perStep: string, labels: string): string {
  return `SELECT ls AS labels, o.1 AS k, o.3 AS v FROM (SELECT ${labels} AS ls, ${perStep} AS steps FROM (${series}))
    ARRAY JOIN arrayFilter(x -> x.2, steps) AS o`;
}

/**
 * A per-step array of length n from a per-sample one: step k takes
 * values[i] for k in [bounds[i], bounds[i+1]) and `initial` before bounds[1]
 * (bounds: nondecreasing, clamped to [0, n], n appended). O(samples + steps)
 * and no lambda captures a whole array (ClickHouse copies a captured array
 * once per element mapped, which made the per-step search quadratic).
 */
function gather(values: string, bounds: string, initial: string, n: string): string {
  return `arraySlice(arrayConcat(arrayWithConstant(${bounds}[1], ${initial}),
      arrayFlatten(arrayMap((x, lo, hi) -> arrayWithConstant(hi - lo, x), ${values}, arrayPopBack(${bounds}), arrayPopFront(${bounds})))), 1, ${n})`;
}

/** The per-sample array shifted to "the next sample's" (the last gets `pad`). */
const nextOf = (values: string, pad: string): string => `arrayPushBack(arrayPopFront(${values}), ${pad})`;
/** The per-sample array shifted to "the previous sample's" (the first gets `pad`). */
const previousOf = (values: string, pad: string): string => `arrayPushFront(arrayPopBack(${values}), ${pad})`;

/** Each sample's first step at or after it (clamped to [0, n], n appended): sample i is at or before step k iff bound[i] <= k. */
function firstStepAtOrAfter(c: Compiler, offsetMs: number, shiftMs: string, n: string): string {
  const start = c.p.bind(c.steps.startMs - offsetMs, 'Int64');
  const step = c.p.bind(c.steps.stepMs, 'Int64');
  return `arrayPushBack(arrayMap(t -> toUInt64(least(greatest(toInt64(ceil((t + ${shiftMs} - ${start}) / ${step})), 0), ${n})), ts), ${n})`;
}

function vectorSelector(c: Compiler, sel: VectorSelector): string {
  const t = stepTime(c, 'k', sel.offsetMs);
  const lookback = c.p.bind(c.steps.lookbackMs, 'Int64');
  const n = c.p.bind(c.steps.count, 'UInt64');
  // At step k: whether a sample is at or before it, and the last such sample's time and value.
  const series = `SELECT labels, ${gather('arrayWithConstant(length(ts), 1)', 'bounds', '0', n)} AS has,
      ${gather('ts', 'bounds', 'toInt64(0)', n)} AS lt, ${gather('vs', 'bounds', '0.', n)} AS lv FROM (
      SELECT labels, ts, vs, ${firstStepAtOrAfter(c, sel.offsetMs, '0', n)} AS bounds FROM (${seriesArrays(c, sel, c.steps.lookbackMs, false)}))`;
  const perStep = `arrayMap((k, h, t, v) -> (k, h = 1 AND t >= ${t} - ${lookback} AND NOT ${isStale('v')}, v), range(${n}), has, lt, lv)`;
  return explode(series, perStep, 'labels');
}

/**
 * Per-step arrays a range function reads, by the name its lambda gives each
 * element. The window at step k is samples a..b: li = b (the last at or
 * before t_k), bi = a - 1 (how many lie before t_k - range).
 */
const stepArrays: Readonly<Record<string, (n: string) => string>> = {
  li: (n) => gather('arrayEnumerate(ts)', 'lastBounds', 'toUInt32(0)', n),
  bi: (n) => gather('arrayEnumerate(ts)', 'beforeBounds', 'toUInt32(0)', n),
  lv: (n) => gather('vs', 'lastBounds', '0.', n),
  lt: (n) => gather('ts', 'lastBounds', 'toInt64(0)', n),
  fv: (n) => gather(nextOf('vs', '0.'), 'beforeBounds', 'vs[1]', n),
  ft: (n) => gather(nextOf('ts', 'toInt64(0)'), 'beforeBounds', 'ts[1]', n),
  pv: (n) => gather(previousOf('vs', '0.'), 'lastBounds', '0.', n),
  pt: (n) => gather(previousOf('ts', 'toInt64(0)'), 'lastBounds', 'toInt64(0)', n),
  lr: (n) => gather('resets', 'lastBounds', '0.', n),
  fr: (n) => gather(nextOf('resets', '0.'), 'beforeBounds', 'resets[1]', n),
};

/** A range function's value at step k from the per-step arrays it names (cnt = b - a + 1 is always given). */
function rangeValue(fn: RangeCall['fn'], m: MatrixSelector, c: Compiler): { minSamples: number; uses: string[]; sql: string } {
  // Sums and extremes read the window's slice; these capture the series' array (see gather): slower, exact.
  const slice = 'arraySlice(vs, bi + 1, cnt)';
  switch (fn) {
    case 'count_over_time': return { minSamples: 1, uses: [], sql: 'toFloat64(cnt)' };
    case 'sum_over_time': return { minSamples: 1, uses: [], sql: `arraySum(${slice})` };
    case 'avg_over_time': return { minSamples: 1, uses: [], sql: `arraySum(${slice}) / cnt` };
    case 'min_over_time': return { minSamples: 1, uses: [], sql: `arrayMin(${slice})` };
    case 'max_over_time': return { minSamples: 1, uses: [], sql: `arrayMax(${slice})` };
    case 'last_over_time': return { minSamples: 1, uses: ['lv'], sql: 'lv' };
    case 'irate': return { minSamples: 2, uses: ['lv', 'lt', 'pv', 'pt'], sql: 'if(lv < pv, lv, lv - pv) / ((lt - pt) / 1000)' };
    case 'rate': case 'increase': case 'delta': {
      const counter = fn !== 'delta';
      const rangeEnd = stepTime(c, 'k', m.selector.offsetMs);
      const rangeStart = `(${rangeEnd} - ${c.p.bind(m.rangeMs, 'Int64')})`;
      const result = counter ? '(lv - fv + lr - fr)' : '(lv - fv)';
      const sampled = '((lt - ft) / 1000)';
      const avg = `(${sampled} / (cnt - 1))`;
      const toStartRaw = `((ft - ${rangeStart}) / 1000)`;
      // Prometheus 2: a counter's extrapolation to the start stops where it would fall below zero.
      const toStart = counter
        ? `if(${result} > 0 AND fv >= 0, least(${toStartRaw}, ${sampled} * (fv / ${result})), ${toStartRaw})`
        : toStartRaw;
      const toEnd = `((${rangeEnd} - lt) / 1000)`;
      const threshold = `(${avg} * 1.1)`;
      const interval = `(${sampled} + if(${toStart} < ${threshold}, ${toStart}, ${avg} / 2) + if(${toEnd} < ${threshold}, ${toEnd}, ${avg} / 2))`;
      const scaled = `${result} * (${interval} / ${sampled})`;
      const uses = ['lv', 'lt', 'fv', 'ft', ...(counter ? ['lr', 'fr'] : [])];
      return { minSamples: 2, uses, sql: fn === 'rate' ? `${scaled} / ${c.p.bind(m.rangeMs / 1000, 'Float64')}` : scaled };
    }
  }
}

function rangeCall(c: Compiler, call: RangeCall): string {
  const m = call.arg;
  const range = c.p.bind(m.rangeMs, 'Int64');
  const n = c.p.bind(c.steps.count, 'UInt64');
  const counter = call.fn === 'rate' || call.fn === 'increase';
  // resets[i]: what counter resets add up to through sample i (a drop adds the value before it).
  const resets = counter ? `, arrayCumSum(arrayMap((x, prev) -> if(x < prev, prev, 0.), vs, ${previousOf('vs', 'vs[1]')})) AS resets` : '';
  const { minSamples, uses, sql } = rangeValue(call.fn, m, c);
  const names = ['li', 'bi', ...uses];
  const sliced = /\bvs\b/.test(sql);
  // lastBounds: a sample is at or before t_k; beforeBounds: before t_k - range, i.e. t + range + 1 ms at or before t_k (closed window).
  const series = `SELECT labels${sliced ? ', vs' : ''}, ${names.map((name) => `${(stepArrays[name] ?? ((): never => { throw new Error(name); }))(n)} AS ${name}_`).join(', ')}
    FROM (SELECT labels, ts, vs${resets}, ${firstStepAtOrAfter(c, m.selector.offsetMs, '0', n)} AS lastBounds,
      ${firstStepAtOrAfter(c, m.selector.offsetMs, `(${range} + 1)`, n)} AS beforeBounds
      FROM (${seriesArrays(c, m.selector, m.rangeMs, true)}))`;
  const perStep = `arrayMap((k, ${names.join(', ')}) -> (k, li - bi >= ${minSamples}, ${sql.replaceAll('cnt', '(li - bi)')}), range(${n}), ${names.map((name) => `${name}_`).join(', ')})`;
  return explode(series, perStep, call.fn === 'last_over_time' ? 'labels' : dropName('labels'));
}

function aggregate(c: Compiler, a: Aggregate): string {
  const inner = vector(c, a.expr);
  const g = a.grouping;
  const list = g === undefined ? '' : c.p.bind(g.labels, 'Array(String)');
  const group = g === undefined ? emptyLabels
    : g.without ? `arrayFilter(p -> NOT has(${list}, p.1) AND p.1 != '__name__', labels)` : `arrayFilter(p -> has(${list}, p.1), labels)`;
  if (a.op === 'topk' || a.op === 'bottomk') {
    const k = scalar(c, a.param ?? { kind: 'number', value: 1, pos: 0 });
    const order = a.op === 'topk' ? 'isNaN(v), v DESC' : 'isNaN(v), v ASC';
    return `SELECT labels, k, v FROM (
      SELECT labels, k, v, row_number() OVER (PARTITION BY ${group}, k ORDER BY ${order}) AS rank FROM (${inner}))
      WHERE rank <= ${k}`;
  }
  const fns = { sum: 'sum(v)', avg: 'avg(v)', min: 'min(v)', max: 'max(v)', count: 'toFloat64(count())' } as const;
  return `SELECT g AS labels, kk AS k, vv AS v FROM (SELECT ${group} AS g, k AS kk, ${fns[a.op]} AS vv FROM (${inner}) GROUP BY g, kk)`;
}

/** Veltkamp's split of a double into a high and a low half whose products are exact. */
const splitHigh = (a: string): string => `((134217729 * ${a}) - ((134217729 * ${a}) - ${a}))`;

/**
 * Go's math.Mod (ClickHouse has no exact fmod; its float modulo rounds the
 * quotient): q = trunc(l / r), then l - q·r with q·r's rounding error taken
 * back exactly (Dekker's product), then one step of r when the rounded
 * quotient was one too far. NaN for a zero divisor, a NaN or an infinite
 * dividend; the dividend for an infinite divisor.
 */
function moduloSql(l: string, r: string): string {
  const q = `trunc(${l} / ${r})`;
  const p = `(${q} * ${r})`;
  const qh = splitHigh(q);
  const rh = splitHigh(r);
  const ql = `(${q} - ${qh})`;
  const rl = `(${r} - ${rh})`;
  const error = `(((${qh} * ${rh} - ${p}) + ${qh} * ${rl} + ${ql} * ${rh}) + ${ql} * ${rl})`;
  const d = `((${l} - ${p}) - ${error})`;
  const a = `abs(${r})`;
  return `multiIf(${r} = 0 OR isNaN(${l}) OR isNaN(${r}) OR isInfinite(${l}), nan, isInfinite(${r}), ${l},
    ${l} >= 0 AND ${d} < 0, ${d} + ${a}, ${l} >= 0 AND ${d} >= ${a}, ${d} - ${a},
    ${l} < 0 AND ${d} > 0, ${d} - ${a}, ${l} < 0 AND ${d} <= -${a}, ${d} + ${a}, ${d})`;
}

const sqlOps: Readonly<Record<Binary['op'], (l: string, r: string) => string>> = {
  '+': (l, r) => `(${l} + ${r})`, '-': (l, r) => `(${l} - ${r})`, '*': (l, r) => `(${l} * ${r})`, '/': (l, r) => `(${l} / ${r})`,
  '%': (l, r) => moduloSql(l, r),
  '^': (l, r) => `pow(${l}, ${r})`,
  '==': (l, r) => `(${l} = ${r})`, '!=': (l, r) => `(${l} != ${r})`, '>': (l, r) => `(${l} > ${r})`, '<': (l, r) => `(${l} < ${r})`,
  '>=': (l, r) => `(${l} >= ${r})`, '<=': (l, r) => `(${l} <= ${r})`,
};

/** Go's math.Pow where it differs from JavaScript's: 1 to any power, and -1 to an infinite one, are 1. */
function goPow(x: number, y: number): number {
  if (x === 1 || (x === -1 && !Number.isFinite(y) && !Number.isNaN(y))) return 1;
  return x ** y;
}

/**
 * Scalar operators as Prometheus evaluates them (Go float64): JavaScript's
 * `%` is the exact remainder with the dividend's sign, like Go's math.Mod;
 * a comparison between scalars (always with bool) is 1 or 0.
 */
const scalarOps: Readonly<Record<Binary['op'], (l: number, r: number) => number>> = {
  '+': (l, r) => l + r, '-': (l, r) => l - r, '*': (l, r) => l * r, '/': (l, r) => l / r, '%': (l, r) => l % r, '^': goPow,
  '==': (l, r) => Number(l === r), '!=': (l, r) => Number(l !== r), '>': (l, r) => Number(l > r), '<': (l, r) => Number(l < r),
  '>=': (l, r) => Number(l >= r), '<=': (l, r) => Number(l <= r),
};

/** A constant scalar: its value, and its SQL as a bound parameter. */
const constant = (c: Compiler, value: number): Compiled => ({ type: 'scalar', sql: numberSql(c.p, value), value });

function binary(c: Compiler, b: Binary): Compiled {
  const l = compileExpr(c, b.lhs);
  const r = compileExpr(c, b.rhs);
  const op = sqlOps[b.op];
  const comparison = isComparison(b.op);
  // Folded rather than written out: an operand's SQL appears many times in some operators' SQL (the exact modulo),
  // so nested constant expressions would grow the statement exponentially.
  if (l.type === 'scalar' && r.type === 'scalar') return constant(c, scalarOps[b.op](l.value, r.value));
  const keepName = comparison && !b.bool;
  if (l.type === 'scalar' || r.type === 'scalar') {
    const vec = l.type === 'vector' ? l.sql : r.sql;
    const expr = l.type === 'scalar' ? op(l.sql, 'v') : op('v', r.sql);
    const labels = keepName ? 'labels' : dropName('labels');
    if (!comparison) return { type: 'vector', sql: relation(labels, 'k', expr, vec) };
    if (b.bool) return { type: 'vector', sql: relation(labels, 'k', `toFloat64(${expr})`, vec) };
    return { type: 'vector', sql: `SELECT labels, k, v FROM (${vec}) WHERE ${expr}` };
  }
  const m = b.matching ?? { on: false, labels: [] };
  const list = c.p.bind(m.labels, 'Array(String)');
  const sig = m.on ? `arrayFilter(p -> has(${list}, p.1), labels)` : `arrayFilter(p -> NOT has(${list}, p.1) AND p.1 != '__name__', labels)`;
  const named = keepName ? 'l.labels' : dropName('l.labels');
  const resultLabels = m.on ? `arrayFilter(p -> has(${list}, p.1), ${named})` : m.labels.length === 0 ? named : `arrayFilter(p -> NOT has(${list}, p.1), ${named})`;
  const expr = op('l.v', 'r.v');
  const value = !comparison ? expr : b.bool ? `toFloat64(${expr})` : 'l.v';
  return {
    type: 'vector',
    // One-to-one only: a series matching two on the other side would give two results of one label set, which
    // Prometheus refuses ("many-to-many matching not allowed"); so does this, even when an aggregation follows.
    sql: `SELECT ls AS labels, ks AS k, vs_ AS v FROM (
      SELECT ls, ks, vs_, count() OVER (PARTITION BY ls, ks) AS matches FROM (SELECT ${resultLabels} AS ls, l.k AS ks, ${value} AS vs_
        FROM (SELECT labels, k, v, ${sig} AS sig FROM (${l.sql})) AS l
        INNER JOIN (SELECT k, v, ${sig} AS sig FROM (${r.sql})) AS r ON l.sig = r.sig AND l.k = r.k${comparison && !b.bool ? ` WHERE ${expr}` : ''}))
      WHERE throwIf(matches > 1, 'many-to-many matching not allowed: matching labels must be unique on one side') = 0`,
  };
}

function vectorCall(c: Compiler, call: VectorCall): string {
  const inner = vector(c, call.arg);
  const s = call.scalars.map((e) => scalar(c, e));
  const [s0 = '1'] = s;
  const mapped = (expr: string): string => relation(dropName('labels'), 'k', expr, inner);
  switch (call.fn) {
    case 'abs': return mapped('abs(v)');
    case 'clamp_min': return mapped(`if(isNaN(v) OR isNaN(${s0}), nan, greatest(v, ${s0}))`);
    case 'clamp_max': return mapped(`if(isNaN(v) OR isNaN(${s0}), nan, least(v, ${s0}))`);
    case 'round': return mapped(`floor(v * (1 / ${s0}) + 0.5) / (1 / ${s0})`);
    case 'histogram_quantile': return histogramQuantile(inner, s0);
  }
}

/**
 * histogram_quantile over classic buckets, as Prometheus 2's bucketQuantile:
 * buckets of one series (labels without le) sorted by bound, equal bounds
 * merged, counts made monotonic, linear interpolation within the bucket.
 */
function histogramQuantile(inner: string, q: string): string {
  // One bucket per bound of each series (its labels without le): the counts of equal bounds summed, then sorted by bound.
  // A series without a numeric le has none (Prometheus ignores it).
  const perBound = `SELECT arrayFilter(p -> p.1 != 'le' AND p.1 != '__name__', labels) AS ls, k AS kb, toFloat64OrNull(arrayFirst(p -> p.1 = 'le', labels).2) AS le, sum(v) AS c
    FROM (${inner}) WHERE le IS NOT NULL GROUP BY ls, kb, le`;
  const grouped = `SELECT ls AS labels, kb AS k, arraySort(x -> x.1, groupArray((assumeNotNull(le), c))) AS bs FROM (${perBound}) GROUP BY ls, kb`;
  // Monotonic counts: each the maximum of those before it.
  const counts = 'arrayMap(i -> arrayMax(arraySlice(arrayMap(x -> x.2, bs), 1, i)), arrayEnumerate(bs))';
  const bounds = 'arrayMap(x -> x.1, bs)';
  const prepared = `SELECT labels, k, ${bounds} AS ub, ${counts} AS cs, length(bs) AS nb, cs[nb] AS total, ${q} AS q,
      arrayFirstIndex(c -> c >= q * total, arraySlice(cs, 1, nb - 1)) AS found, if(found = 0, nb, found) AS bi FROM (${grouped})`;
  const value = `multiIf(
      isNaN(q), nan, q < 0, -inf, q > 1, inf,
      ub[nb] != inf OR nb < 2 OR total = 0, nan,
      bi = nb, ub[nb - 1],
      bi = 1 AND ub[1] <= 0, ub[1],
      if(bi = 1, 0, ub[bi - 1]) + (ub[bi] - if(bi = 1, 0, ub[bi - 1])) * ((q * total - if(bi = 1, 0, cs[bi - 1])) / (cs[bi] - if(bi = 1, 0, cs[bi - 1]))))`;
  return `SELECT labels, k, ${value} AS v FROM (${prepared})`;
}

function vector(c: Compiler, e: Expr): string {
  const compiled = compileExpr(c, e);
  if (compiled.type !== 'vector') throw new Error(`expected a vector expression, got ${compiled.type}`);
  return compiled.sql;
}

function scalar(c: Compiler, e: Expr): string {
  const compiled = compileExpr(c, e);
  if (compiled.type !== 'scalar') throw new Error(`expected a scalar expression, got ${compiled.type}`);
  return compiled.sql;
}

function compileExpr(c: Compiler, e: Expr): Compiled {
  switch (e.kind) {
    case 'number': return constant(c, e.value);
    case 'vector': return { type: 'vector', sql: vectorSelector(c, e) };
    case 'range_call': return { type: 'vector', sql: rangeCall(c, e) };
    case 'vector_call': return { type: 'vector', sql: vectorCall(c, e) };
    case 'aggregate': return { type: 'vector', sql: aggregate(c, e) };
    case 'binary': return binary(c, e);
    case 'negate': {
      const inner = compileExpr(c, e.expr);
      return inner.type === 'scalar' ? constant(c, -inner.value) : { type: 'vector', sql: relation(dropName('labels'), 'k', '-v', inner.sql) };
    }
    case 'matrix': throw new Error('a range selector is evaluated by matrixSql, not as a step expression');
  }
}

/** The SELECT of an instant-vector or scalar expression over the steps. */
export function compile(ctx: SourceContext, steps: Steps, e: Expr): Compiled {
  return compileExpr({ ctx, steps, p: ctx.params }, e);
}

/** The raw samples of a range selector at one time (an instant query of foo[5m]): (labels, ts, vs) per series, stale markers left out. */
export function matrixSql(ctx: SourceContext, atMs: number, m: MatrixSelector): string {
  const c: Compiler = { ctx, steps: { startMs: atMs, stepMs: 1, count: 1, lookbackMs: 0 }, p: ctx.params };
  const lo = c.p.bind(atMs - m.selector.offsetMs - m.rangeMs, 'Int64');
  return `SELECT labels, arrayFilter(x -> x >= ${lo}, ts) AS ts, arraySlice(vs, -length(arrayFilter(x -> x >= ${lo}, ts))) AS vs FROM (${seriesArrays(c, m.selector, m.rangeMs, true)})`;
}
