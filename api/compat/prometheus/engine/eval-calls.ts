// Function calls, as Prometheus' engine makes them: a function over a range
// vector gets, at each step, every series' window (t - range, t] (moved by
// offset, pinned by @, read from stored samples or a subquery's points); the
// other functions get their arguments' values at the step. The functions
// themselves come from the library's table (functions/function-table.ts).
import type { Result } from '../../../../src/result.ts';
import type { PromError } from '../prom-envelope.ts';
import { execution } from '../prom-envelope.ts';
import type { EvalSeries } from './eval-series.ts';
import { addPoint, dropMetricName, labelsKey, stop } from './eval-series.ts';
import type { Evaluator } from './evaluator.ts';
import { CallFolds } from './monotonicity-folds.ts';
import { sortInRangeQueryWarning } from './functions/annotations.ts';
import type { FunctionDef, StepArg, StepOutput } from './functions/function-types.ts';
import type { CallExpr, Expr, MatrixSelector, SubqueryExpr, VectorSelector } from './promql-ast.ts';
import { typeOf } from './promql-ast.ts';
import type { LabelMatcher, Labels } from './sample-source.ts';
import { atTime } from './select-ranges.ts';
import { unwrap } from './step-invariant.ts';
import { InstantLookup, WindowCursor } from './stored-points.ts';
import type { CallContext, FPoint, HPoint, Vector, VectorElement, WindowSeries } from './values.ts';

const sortFunctions = new Set(['sort', 'sort_desc', 'sort_by_label', 'sort_by_label_desc']);

/** The matchers absent() and absent_over_time() build their labels from: the first argument's, when it is a selector. */
function selectorMatchers(arg: Expr | undefined): readonly LabelMatcher[] | undefined {
  if (arg?.kind === 'vector') return arg.matchers;
  if (arg?.kind === 'matrix') return arg.selector.matchers;
  return undefined;
}

/**
 * One call's answer at step `t`, a scalar answer as an element without
 * labels. Its annotations are noted with the position of the argument
 * Prometheus names (the first unless the function says another), its
 * monotonicity fixes folded into the call's `folds`.
 */
function answer(ev: Evaluator, e: CallExpr, def: FunctionDef, result: Result<StepOutput, PromError>, t: number, folds?: CallFolds): VectorElement[] {
  if (!result.ok) return stop(result.error);
  // Prometheus' preprocessing strips the parentheses around each argument before it takes positions.
  const at = (arg: number): string => ev.where(unwrap(e.args[arg] ?? e.args[0] ?? e).pos);
  const { annotations, monotonicityFixes } = result.value;
  if (annotations !== undefined) ev.note(annotations.map((a) => (typeof a === 'string' ? a + at(0) : a.text + at(a.arg))));
  folds?.step(t, monotonicityFixes?.map((fix) => ({ fix, where: at(fix.arg) })) ?? []);
  if (def.returnType === 'scalar') return [{ labels: [], t, f: result.value.vector[0]?.f ?? NaN }];
  return [...result.value.vector];
}

/** Evaluates a function call over the evaluator's steps. */
export async function evalCall(ev: Evaluator, e: CallExpr): Promise<EvalSeries[]> {
  const def = ev.input.functions.get(e.fn);
  if (def === undefined) throw new Error(`function ${e.fn} passed the parser but is not in the table`);
  if (sortFunctions.has(e.fn) && ev.range.start !== ev.range.end) ev.note([sortInRangeQueryWarning + ev.where(e.pos)]);
  const args = e.args.map(unwrap);
  const first = args[0];
  if (e.fn === 'timestamp' && first?.kind === 'vector') return timestampOfSelector(ev, e, def, first);
  const matrixIndex = args.findIndex((a) => a.kind === 'matrix' || a.kind === 'subquery');
  const matchers = selectorMatchers(first);
  const before = ev.state.current;
  const values: EvalSeries[][] = [];
  for (const [i, a] of args.entries()) values.push(i === matrixIndex || a.kind === 'string' ? [] : await ev.eval(a));
  const stepArgs = (vectors: Vector[]): StepArg[] =>
    args.map((a, i): StepArg => {
      if (a.kind === 'string') return { type: 'string', value: a.value };
      if (typeOf(a) === 'scalar') return { type: 'scalar', value: vectors[i]?.[0]?.f ?? NaN };
      return { type: 'vector', value: vectors[i] ?? [] };
    });
  const named = ev.input.delayedNameRemoval ? { delayedNameRemoval: true } : {};
  const selector = matchers === undefined ? {} : { selectorMatchers: matchers };
  const folds = new CallFolds();
  let out: EvalSeries[];
  if (matrixIndex < 0) {
    out = await ev.stepwise(before, values, (vectors, t) => {
      const context: CallContext = { t, windowStart: t, windowEnd: t, ...selector, ...named };
      return ev.settleNames(answer(ev, e, def, def.call(stepArgs(vectors), context), t, folds));
    });
  } else {
    const m = args[matrixIndex] as MatrixSelector | SubqueryExpr;
    out = await overWindows(ev, e, def, m, matrixIndex, values, stepArgs, before, { ...selector, ...named }, folds);
  }
  ev.state.monotonicity.add(folds);
  return out;
}

interface WindowSource {
  readonly labels: WindowSeries['labels'];
  readonly dropName: boolean;
  readonly floats: WindowCursor<FPoint>;
  readonly histograms: WindowCursor<HPoint>;
}

async function windowSources(ev: Evaluator, m: MatrixSelector | SubqueryExpr): Promise<WindowSource[]> {
  if (m.kind === 'matrix') {
    return (ev.input.fetched.get(m.selector) ?? []).map((s) => {
      const p = ev.state.pointsOf(s);
      return { labels: s.labels, dropName: false, floats: new WindowCursor(p.floats), histograms: new WindowCursor(p.histograms) };
    });
  }
  const series = await ev.subquery(m);
  return series.map((s) => ({ labels: s.labels, dropName: s.dropName, floats: new WindowCursor(s.floats), histograms: new WindowCursor(s.histograms) }));
}

/** A function over a range vector: at each step every series' window, then the call. */
async function overWindows(
  ev: Evaluator,
  e: CallExpr,
  def: FunctionDef,
  m: MatrixSelector | SubqueryExpr,
  matrixIndex: number,
  values: EvalSeries[][],
  stepArgs: (vectors: Vector[]) => StepArg[],
  before: number,
  contextExtras: Pick<CallContext, 'selectorMatchers' | 'delayedNameRemoval'>,
  folds: CallFolds,
): Promise<EvalSeries[]> {
  const sources = await windowSources(ev, m);
  const offsetMs = m.kind === 'matrix' ? m.selector.offsetMs : m.offsetMs;
  const at = atTime(m.kind === 'matrix' ? m.selector.at : m.at, ev.input.queryStart, ev.input.queryEnd);
  const scalarArgs = values.map((v) => ev.scalarAt(v));
  const out = new Map<string, { series: EvalSeries; last: number }>();
  const owners = new Map<string, string>();
  const order: EvalSeries[] = [];
  // A function's answer usually keeps its input series' labels array from step to step: its settled labels and keys are worked out once.
  const dropped = new Map<Labels, SettledNames>();
  const kept = new Map<Labels, SettledNames>();
  for (const t of ev.steps()) {
    await ev.tick();
    const windowEnd = (at ?? t) - offsetMs;
    const windowStart = windowEnd - m.rangeMs;
    const windows: WindowSeries[] = [];
    let held = 0;
    for (const s of sources) {
      const floats = s.floats.window(windowStart, windowEnd);
      const histograms = s.histograms.window(windowStart, windowEnd);
      if (floats.length + histograms.length === 0) continue;
      held += floats.length + histograms.length;
      windows.push({ labels: s.labels, floats, histograms, ...(s.dropName ? { dropName: true } : {}) });
    }
    ev.hold(held);
    const vectors: Vector[] = values.map((_, i) => (i === matrixIndex ? [] : [{ labels: [], t, f: scalarArgs[i]?.(t) ?? NaN }]));
    const argList = stepArgs(vectors);
    argList[matrixIndex] = { type: 'matrix', value: windows };
    const context: CallContext = { t, windowStart, windowEnd, ...contextExtras };
    const result = answer(ev, e, def, def.call(argList, context), t, folds);
    ev.state.current -= held;
    for (const raw of result) {
      const drop = raw.dropName === true && !ev.input.delayedNameRemoval;
      const names = settledNames(drop ? dropped : kept, raw.labels, drop);
      const settled: VectorElement = drop ? { labels: names.labels, t: raw.t, f: raw.f, ...(raw.h === undefined ? {} : { h: raw.h }) } : raw;
      const key = names.key;
      if (drop) {
        // Prometheus (without delayed removal) fails when two input series lose their only difference, the name.
        const owner = names.owner;
        if ((owners.get(key) ?? owner) !== owner) stop(execution('vector cannot contain metrics with the same labelset'));
        owners.set(key, owner);
      }
      const known = out.get(key);
      if (known !== undefined && known.last === t) stop(execution('vector cannot contain metrics with the same labelset'));
      const entry = known ?? { series: { labels: settled.labels, dropName: settled.dropName === true, floats: [], histograms: [] }, last: t };
      if (known === undefined) order.push(entry.series);
      entry.last = t;
      addPoint(entry.series, t, settled);
      out.set(key, entry);
      ev.hold(1);
    }
  }
  return ev.settleCount(before, order);
}

/** An answer's labels once `__name__` is settled, their key, and (when the name was dropped) the key of the labels before. */
interface SettledNames {
  readonly labels: Labels;
  readonly key: string;
  readonly owner: string;
}

/** The settled names of `labels`, from `memo` (keyed by the array itself: label arrays are never changed in place). */
function settledNames(memo: Map<Labels, SettledNames>, labels: Labels, drop: boolean): SettledNames {
  const known = memo.get(labels);
  if (known !== undefined) return known;
  const settled = drop ? dropMetricName(labels) : labels;
  const made = { labels: settled, key: labelsKey(settled), owner: drop ? labelsKey(labels) : '' };
  memo.set(labels, made);
  return made;
}

/** timestamp(selector): each element's time is its sample's own, not the step's (Prometheus' rangeEvalTimestampFunctionOverVectorSelector). */
async function timestampOfSelector(ev: Evaluator, e: CallExpr, def: FunctionDef, v: VectorSelector): Promise<EvalSeries[]> {
  const before = ev.state.current;
  const at = atTime(v.at, ev.input.queryStart, ev.input.queryEnd);
  const lookups = (ev.input.fetched.get(v) ?? []).map((s) => ({ labels: s.labels, lookup: new InstantLookup(s, ev.input.lookbackMs) }));
  return ev.stepwise(before, [], (_, t) => {
    const vector: VectorElement[] = [];
    // With @, Prometheus looks the sample up at the @ time itself, without the offset.
    const ref = at ?? t - v.offsetMs;
    for (const { labels, lookup } of lookups) {
      const found = lookup.at(ref);
      if (found !== undefined) vector.push({ labels, t: found.t, f: found.f, ...(found.h === undefined ? {} : { h: found.h }) });
    }
    ev.hold(vector.length);
    const context: CallContext = { t, windowStart: t, windowEnd: t, selectorMatchers: v.matchers };
    return ev.settleNames(answer(ev, e, def, def.call([{ type: 'vector', value: vector }], context), t));
  });
}
