// Evaluates an expression over a range of steps as Prometheus' engine does
// (promql/engine.go eval): each node into series with a point per step,
// children first, then step by step through the node's operation. Selectors
// read the samples fetched once for the whole query; the sample budget, the
// abort signal and delayed or immediate `__name__` removal are kept here.
import { execution } from '../prom-envelope.ts';
import type { PromError } from '../prom-envelope.ts';
import { aggregate, aggregateK, checkK, countValues, Grouping, quantileParamWarnings } from './aggregations.ts';
import type { AggregationSpec } from './aggregations.ts';
import { scalarBinop, setBinop, vectorBinop, vectorScalarBinop } from './binary-ops.ts';
import { evalCall } from './eval-calls.ts';
import type { EvalSeries, StepRange } from './eval-series.ts';
import { addPoint, dropMetricName, histogramSize, labelsKey, seriesSamples, SeriesCursor, stepCount, stop, vectorSamples } from './eval-series.ts';
import type { FunctionDef } from './functions/function-types.ts';
import { scaleHistogram } from './functions/histogram-math.ts';
import { QueryFolds } from './monotonicity-folds.ts';
import { positionOf } from './parse.ts';
import type { AggregateExpr, BinaryExpr, Expr, PosRange, SubqueryExpr, VectorSelector } from './promql-ast.ts';
import { isSetOp, typeOf } from './promql-ast.ts';
import type { Labels, StoredSeries } from './sample-source.ts';
import { atTime } from './select-ranges.ts';
import { InstantLookup, pointsOf } from './stored-points.ts';
import type { SeriesPoints } from './stored-points.ts';
import { unwrap, worthPinning } from './step-invariant.ts';
import type { FPoint, Vector, VectorElement } from './values.ts';

/** What one query's evaluation is given. */
export interface EvaluationInput {
  readonly text: string;
  readonly functions: ReadonlyMap<string, FunctionDef>;
  /** The samples of every selector, fetched before evaluation. */
  readonly fetched: ReadonlyMap<VectorSelector, readonly StoredSeries[]>;
  /** The query's start and end (what @ start() and @ end() mean). */
  readonly queryStart: number;
  readonly queryEnd: number;
  readonly lookbackMs: number;
  readonly maxSamples: number;
  /** A subquery's step when `[range:]` leaves it out (Prometheus: the global evaluation interval, 1m by default). */
  readonly subqueryStepMs: number;
  /** Prometheus' promql-delayed-name-removal feature (off in a flag-free Prometheus 3.16). */
  readonly delayedNameRemoval: boolean;
  readonly signal: AbortSignal;
}

/** The state one query's evaluators share: annotations, samples held, when the event loop last ran. */
export class QueryState {
  /**
   * By their text without the position, as Prometheus keys them (its annotations gain their position only when
   * printed): one message raised at several places is one annotation, at the last place it was raised.
   */
  readonly annotations = new Map<string, string>();
  /** histogram_quantile's monotonicity infos, folded over the query's calls. */
  readonly monotonicity = new QueryFolds();
  current = 0;
  private lastYield = performance.now();
  private calls = 0;
  private readonly points = new Map<StoredSeries, SeriesPoints>();

  /** A stored series' points without markers, converted once per query. */
  pointsOf(s: StoredSeries): SeriesPoints {
    let p = this.points.get(s);
    if (p === undefined) {
      p = pointsOf(s);
      this.points.set(s, p);
    }
    return p;
  }

  /** Whether the evaluation has run long enough to let the event loop (and the abort timer) run. */
  due(): boolean {
    if (++this.calls % 64 !== 0) return false;
    const now = performance.now();
    if (now - this.lastYield < 20) return false;
    this.lastYield = now;
    return true;
  }
}

const tooManySamples = (): PromError => execution('query processing would load too many samples into memory in query execution');

/** Prometheus' answer when the query's context ends: timeout or cancellation, as the signal's reason says. */
export function abortError(signal: AbortSignal): PromError {
  const reason: unknown = signal.reason;
  const timedOut = reason instanceof Error && reason.name === 'TimeoutError';
  return timedOut
    ? { type: 'timeout', message: 'query timed out in expression evaluation' }
    : { type: 'canceled', message: 'query was canceled in expression evaluation' };
}

/** Evaluates expressions over one range of steps. */
export class Evaluator {
  readonly input: EvaluationInput;
  readonly state: QueryState;
  readonly range: StepRange;

  constructor(input: EvaluationInput, state: QueryState, range: StepRange) {
    this.input = input;
    this.state = state;
    this.range = range;
  }

  /** An evaluator over other steps (subqueries, pinned parts) sharing this query's state. */
  over(range: StepRange): Evaluator {
    return new Evaluator(this.input, this.state, range);
  }

  /** The step times, ascending. */
  steps(): number[] {
    const out: number[] = [];
    for (let t = this.range.start; t <= this.range.end; t += this.range.interval) out.push(t);
    return out;
  }

  /** " (1:5)": where a node stands, as Prometheus appends it to annotations. */
  where(pos: PosRange): string {
    return ` (${positionOf(this.input.text, pos.start)})`;
  }

  note(messages: readonly string[] | undefined): void {
    for (const m of messages ?? []) this.state.annotations.set(m.replace(/ \(\d+:\d+\)$/, ''), m);
  }

  /** Checks the abort signal and, now and then, lets the event loop run so that timers (the query timeout) fire. */
  async tick(): Promise<void> {
    if (this.state.due())
      await new Promise<void>((resolve) => {
        setImmediate(resolve);
      });
    if (this.input.signal.aborted) stop(abortError(this.input.signal));
  }

  /** Counts `n` more samples held; over the budget ends the query. */
  hold(n: number): void {
    this.state.current += n;
    if (this.state.current > this.input.maxSamples) stop(tooManySamples());
  }

  /** Sets the samples held after a node: what it started with plus its answer. */
  settleCount(before: number, result: readonly EvalSeries[]): EvalSeries[] {
    this.state.current = before;
    this.hold(seriesSamples(result));
    return [...result];
  }

  /** Removes `__name__` now from elements marked for it, unless removal is delayed to the answer. */
  settleNames(vector: Vector): Vector {
    if (this.input.delayedNameRemoval) return vector;
    return vector.map((e) => (e.dropName === true ? { labels: dropMetricName(e.labels), t: e.t, f: e.f, ...(e.h === undefined ? {} : { h: e.h }) } : e));
  }

  /** The expression's value at every step, as series (a scalar: one series without labels). */
  async eval(e: Expr): Promise<EvalSeries[]> {
    await this.tick();
    if (this.range.end < this.range.start) return [];
    if (this.range.start !== this.range.end && worthPinning(e)) return this.pinned(e);
    switch (e.kind) {
      case 'number':
        return this.constant(e.value);
      case 'paren':
        return this.eval(e.expr);
      case 'unary':
        return e.op === '+' ? this.eval(e.expr) : this.negate(await this.eval(e.expr));
      case 'vector':
        return this.selector(e);
      case 'binary':
        return this.binary(e);
      case 'aggregate':
        return this.aggregation(e);
      case 'call':
        return evalCall(this, e);
      case 'string':
      case 'matrix':
      case 'subquery':
        throw new Error(`a ${typeOf(e)} is not evaluated step by step`);
    }
  }

  /** A step-invariant part: evaluated at the first step only and repeated (Prometheus' StepInvariantExpr). */
  private async pinned(e: Expr): Promise<EvalSeries[]> {
    const once = await this.over({ start: this.range.start, end: this.range.start, interval: this.range.interval }).eval(e);
    const steps = this.steps();
    for (const s of once) {
      const f = s.floats[0];
      const h = s.histograms[0];
      s.floats = f === undefined ? [] : steps.map((t) => ({ t, f: f.f }));
      s.histograms = h === undefined ? [] : steps.map((t) => ({ t, h: h.h }));
      this.hold((steps.length - 1) * (h === undefined ? 1 : histogramSize(h.h)));
    }
    return once;
  }

  private constant(value: number): EvalSeries[] {
    const floats = this.steps().map((t) => ({ t, f: value }));
    this.hold(floats.length);
    return [{ labels: [], dropName: false, floats, histograms: [] }];
  }

  private negate(series: EvalSeries[]): EvalSeries[] {
    for (const s of series) {
      s.dropName = true;
      s.floats = s.floats.map((p) => ({ t: p.t, f: -p.f }));
      s.histograms = s.histograms.map((p) => ({ t: p.t, h: scaleHistogram(p.h, -1) }));
      if (!this.input.delayedNameRemoval) {
        s.labels = dropMetricName(s.labels);
        s.dropName = false;
      }
    }
    return this.input.delayedNameRemoval ? series : mergeSameLabels(series);
  }

  /** An instant vector selector: per step the newest sample in (t - lookback, t], moved by offset or pinned by @. */
  private async selector(e: VectorSelector): Promise<EvalSeries[]> {
    const at = atTime(e.at, this.input.queryStart, this.input.queryEnd);
    const steps = this.steps();
    const out: EvalSeries[] = [];
    for (const stored of this.input.fetched.get(e) ?? []) {
      await this.tick();
      const lookup = new InstantLookup(stored, this.input.lookbackMs);
      const s: EvalSeries = { labels: stored.labels, dropName: false, floats: [], histograms: [] };
      const { values, histograms } = stored;
      for (const t of steps) {
        const i = lookup.indexAt((at ?? t) - e.offsetMs);
        if (i < 0) continue;
        const h = histograms?.[i];
        if (h === undefined) {
          s.floats.push({ t, f: values[i] ?? 0 });
          this.hold(1);
        } else {
          s.histograms.push({ t, h });
          this.hold(histogramSize(h));
        }
      }
      if (s.floats.length + s.histograms.length > 0) out.push(s);
    }
    return out;
  }

  /**
   * Steps through the inputs' vectors and collects `fn`'s answers into series
   * (Prometheus' rangeEval), failing on two equal label sets at one step.
   */
  async stepwise(before: number, inputs: readonly EvalSeries[][], fn: (vectors: Vector[], t: number, step: number) => Vector): Promise<EvalSeries[]> {
    const cursors = inputs.map((ss) => ss.map((s) => new SeriesCursor(s)));
    const single = this.range.start === this.range.end;
    const out = new Map<string, { series: EvalSeries; last: number }>();
    // Results whose labels array is the one an output series was made with
    // (an aggregation's groups, a function's kept labels) skip the key.
    const byLabels = new Map<Labels, { series: EvalSeries; last: number }>();
    const singleOut: EvalSeries[] = [];
    let step = 0;
    for (const t of this.steps()) {
      await this.tick();
      const vectors = cursors.map((cs) => {
        const v: VectorElement[] = [];
        for (const c of cs) {
          const e = c.at(t);
          if (e !== undefined) v.push(e);
        }
        return v;
      });
      const result = fn(vectors, t, step++);
      this.hold(vectorSamples(result));
      if (single) {
        if (!this.input.delayedNameRemoval) failOnSameLabels(result);
        for (const e of result) {
          const s: EvalSeries = { labels: e.labels, dropName: e.dropName === true, floats: [], histograms: [] };
          addPoint(s, t, e);
          singleOut.push(s);
        }
        continue;
      }
      for (const e of result) {
        let known = byLabels.get(e.labels);
        if (known === undefined) {
          const key = labelsKey(e.labels);
          known = out.get(key);
          if (known === undefined) {
            known = { series: { labels: e.labels, dropName: e.dropName === true, floats: [], histograms: [] }, last: NaN };
            out.set(key, known);
            byLabels.set(e.labels, known);
          }
        }
        if (known.last === t) stop(execution('vector cannot contain metrics with the same labelset'));
        known.last = t;
        addPoint(known.series, t, e);
      }
    }
    return this.settleCount(before, single ? singleOut : [...out.values()].map((x) => x.series));
  }

  /** A scalar-typed value's number at each step. */
  scalarAt(series: readonly EvalSeries[]): (t: number) => number {
    const byTime = new Map<number, number>();
    for (const p of series[0]?.floats ?? []) byTime.set(p.t, p.f);
    return (t) => byTime.get(t) ?? NaN;
  }

  private async binary(e: BinaryExpr): Promise<EvalSeries[]> {
    const before = this.state.current;
    const lhs = await this.eval(e.lhs);
    const rhs = await this.eval(e.rhs);
    const lt = typeOf(e.lhs);
    const rt = typeOf(e.rhs);
    const where = this.where(e.pos);
    if (lt === 'scalar' && rt === 'scalar') {
      return this.stepwise(before, [lhs, rhs], ([l, r], t) => [{ labels: [], t, f: scalarBinop(e.op, l?.[0]?.f ?? NaN, r?.[0]?.f ?? NaN) }]);
    }
    if (lt === 'vector' && rt === 'vector') {
      const matching = e.matching ?? { card: isSetOp(e.op) ? 'many-to-many' : 'one-to-one', on: false, labels: [], include: [] };
      if (e.op === 'and' || e.op === 'or' || e.op === 'unless') {
        const op = e.op;
        return this.stepwise(before, [lhs, rhs], ([l, r]) => setBinop(op, l ?? [], r ?? [], matching));
      }
      return this.stepwise(before, [lhs, rhs], ([l, r]) => {
        const res = vectorBinop(e.op, l ?? [], r ?? [], matching, e.bool, where);
        this.note(res.annotations);
        return this.settleNames(res.vector);
      });
    }
    const vectorLeft = lt === 'vector';
    return this.stepwise(before, [lhs, rhs], ([l, r]) => {
      const res = vectorScalarBinop(e.op, (vectorLeft ? l : r) ?? [], (vectorLeft ? r : l)?.[0]?.f ?? NaN, !vectorLeft, e.bool, where);
      this.note(res.annotations);
      return this.settleNames(res.vector);
    });
  }

  private async aggregation(e: AggregateExpr): Promise<EvalSeries[]> {
    const before = this.state.current;
    const spec: AggregationSpec = { op: e.op, grouping: e.grouping, without: e.without, where: this.where(unwrap(e.expr).pos) };
    if (e.op === 'count_values') {
      const label = e.param?.kind === 'string' ? e.param.value : '';
      if (label === '') stop(execution(`invalid label name "${label}"`));
      const input = await this.eval(e.expr);
      return this.stepwise(before, [input], ([v], t) => countValues(spec, v ?? [], label, t).vector);
    }
    const paramSeries = e.param === undefined ? undefined : await this.eval(e.param);
    const paramAt = paramSeries === undefined ? (): number => NaN : this.scalarAt(paramSeries);
    const params = paramSeries === undefined ? [] : this.steps().map(paramAt);
    if (e.op === 'topk' || e.op === 'bottomk') {
      if (checkK(params) === 'none') return this.settleCount(before, []);
    }
    if (e.op === 'quantile' && e.param !== undefined) this.note(quantileParamWarnings(params, this.where(unwrap(e.param).pos)));
    const grouping = new Grouping(spec.grouping, spec.without);
    if ((e.op === 'count' || e.op === 'group') && this.range.start !== this.range.end) {
      const inner = unwrap(e.expr);
      // Over a selector (not pinned by @): counted straight from the stored samples, no series of points made.
      if (inner.kind === 'vector' && inner.at === undefined) {
        const stored = this.storedSteps(inner);
        return this.countGroups(before, stored.inputs, grouping, e.op, stored.held);
      }
      return this.countGroups(before, evalSteps(await this.eval(e.expr), this.range), grouping, e.op);
    }
    const input = await this.eval(e.expr);
    return this.stepwise(before, [input], ([v], t) => {
      const res = e.op === 'topk' || e.op === 'bottomk' ? aggregateK(spec, v ?? [], paramAt(t), grouping) : aggregate(spec, v ?? [], paramAt(t), t, grouping);
      this.note(res.annotations);
      return res.vector;
    });
  }

  /** A selector's series as countGroups reads them: per series, the steps it has a sample at (as selector() would give them), and the samples selector() would hold. */
  private storedSteps(e: VectorSelector): { inputs: CountInput[]; held: () => number } {
    const { start, interval } = this.range;
    const steps = stepCount(this.range);
    let held = 0;
    const inputs = (this.input.fetched.get(e) ?? []).map((stored): CountInput => ({
      labels: stored.labels,
      dropName: false,
      visit: (at) => {
        const lookup = new InstantLookup(stored, this.input.lookbackMs);
        for (let k = 0; k < steps; k++) {
          const i = lookup.indexAt(start + k * interval - e.offsetMs);
          if (i < 0) continue;
          const h = stored.histograms?.[i];
          held += h === undefined ? 1 : histogramSize(h);
          at(k);
        }
      },
    }));
    return { inputs, held: () => held };
  }

  /**
   * count and group over a range of steps, series by series instead of step by step: each input series'
   * group is found once and its points counted into per-step slots. The same answer as stepwise (an
   * element per point, whatever its value or kind), its series in the order stepwise makes them (by
   * the step, then the input series, of each group's first element).
   */
  private async countGroups(
    before: number,
    input: readonly CountInput[],
    grouping: Grouping,
    op: 'count' | 'group',
    inputHeld = (): number => 0,
  ): Promise<EvalSeries[]> {
    const { start, interval } = this.range;
    const steps = stepCount(this.range);
    interface Slots {
      readonly labels: Labels;
      readonly counts: Uint32Array;
      readonly drop: Uint8Array;
      firstStep: number;
      firstSeries: number;
    }
    const slots: (Slots | undefined)[] = [];
    const used: Slots[] = [];
    for (let si = 0; si < input.length; si++) {
      if (si % 256 === 0) await this.tick();
      const s = input[si];
      if (s === undefined) continue;
      let slot: Slots | undefined;
      s.visit((k) => {
        if (slot === undefined) {
          const g = grouping.of(s.labels);
          slot = slots[g.id];
          if (slot === undefined) {
            slot = { labels: g.labels, counts: new Uint32Array(steps), drop: new Uint8Array(steps), firstStep: steps, firstSeries: si };
            slots[g.id] = slot;
            used.push(slot);
          }
        }
        slot.counts[k] = (slot.counts[k] ?? 0) + 1;
        if (s.dropName) slot.drop[k] = 1;
        if (k < slot.firstStep) {
          slot.firstStep = k;
          slot.firstSeries = si;
        }
      });
    }
    // The input's samples count while the answer is made, as a selector's do before stepwise.
    this.hold(inputHeld());
    const order = used.sort((a, b) => a.firstStep - b.firstStep || a.firstSeries - b.firstSeries);
    const out: EvalSeries[] = [];
    let held = 0;
    for (const slot of order) {
      const floats: FPoint[] = [];
      for (let k = slot.firstStep; k < steps; k++) {
        const n = slot.counts[k] ?? 0;
        if (n > 0) floats.push({ t: start + k * interval, f: op === 'count' ? n : 1 });
      }
      held += floats.length;
      out.push({ labels: slot.labels, dropName: slot.drop[slot.firstStep] === 1, floats, histograms: [] });
    }
    this.hold(held);
    return this.settleCount(before, out);
  }

  /** A subquery's series: its expression evaluated at its own steps, aligned to its step as Prometheus does. */
  async subquery(e: SubqueryExpr): Promise<EvalSeries[]> {
    const stepMs = e.stepMs === 0 ? this.input.subqueryStepMs : e.stepMs;
    const at = atTime(e.at, this.input.queryStart, this.input.queryEnd);
    const parentStart = at ?? this.range.start;
    const parentEnd = at ?? this.range.start + Math.floor((this.range.end - this.range.start) / this.range.interval) * this.range.interval;
    const lowest = parentStart - e.offsetMs - e.rangeMs;
    let start = stepMs * Math.trunc(lowest / stepMs);
    if (start <= lowest) start += stepMs;
    const series = await this.over({ start, end: parentEnd - e.offsetMs, interval: stepMs }).eval(e.expr);
    // Counter-reset hints cannot be trusted across a subquery's re-sampled points (Prometheus resets them to unknown).
    for (const s of series) {
      s.histograms = s.histograms.map((p) =>
        p.h.counterResetHint === 'reset' || p.h.counterResetHint === 'not_reset' ? { t: p.t, h: { ...p.h, counterResetHint: 'unknown' } } : p,
      );
    }
    return series;
  }
}

/** One input series of countGroups: its labels, and the step numbers it has an element at (ascending). */
interface CountInput {
  readonly labels: Labels;
  readonly dropName: boolean;
  readonly visit: (at: (step: number) => void) => void;
}

/** Evaluated series as countGroups reads them: only points at the range's steps are elements (a cursor asks for nothing else). */
function evalSteps(series: readonly EvalSeries[], range: StepRange): CountInput[] {
  const steps = stepCount(range);
  return series.map((s) => ({
    labels: s.labels,
    dropName: s.dropName,
    visit: (at) => {
      for (const points of [s.floats, s.histograms]) {
        for (const p of points) {
          const k = (p.t - range.start) / range.interval;
          if (Number.isInteger(k) && k >= 0 && k < steps) at(k);
        }
      }
    },
  }));
}

/** Fails when two elements of one step share a label set. */
export function failOnSameLabels(vector: Vector): void {
  if (vector.length < 2) return;
  const seen = new Set<string>();
  for (const e of vector) {
    const key = labelsKey(e.dropName === true ? dropMetricName(e.labels) : e.labels);
    if (seen.has(key)) stop(execution('vector cannot contain metrics with the same labelset'));
    seen.add(key);
  }
}

/** Series that now share a label set joined into one (Prometheus' mergeSeriesWithSameLabelset); two points at one time fail. */
export function mergeSameLabels(series: EvalSeries[]): EvalSeries[] {
  const byKey = new Map<string, EvalSeries>();
  let merged = false;
  for (const s of series) {
    const key = labelsKey(s.labels);
    const base = byKey.get(key);
    if (base === undefined) {
      byKey.set(key, s);
      continue;
    }
    merged = true;
    base.floats = [...base.floats, ...s.floats].sort((a, b) => a.t - b.t);
    base.histograms = [...base.histograms, ...s.histograms].sort((a, b) => a.t - b.t);
    for (const points of [base.floats, base.histograms]) {
      for (let i = 1; i < points.length; i++) if (points[i]?.t === points[i - 1]?.t) stop(execution('vector cannot contain metrics with the same labelset'));
    }
  }
  return merged ? [...byKey.values()] : series;
}

/** The number of steps of an evaluator's range. */
export const stepsOf = stepCount;
