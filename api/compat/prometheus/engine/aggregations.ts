// Aggregation operators at one step, as Prometheus' engine computes them
// (aggregation, aggregationK, aggregationCountValues): groups in order of
// first appearance, sum and avg with Kahan-Neumaier compensation (avg
// falling back to an incremental mean when the sum would overflow),
// stddev/stdvar by Welford, min/max preferring numbers over NaN, topk/bottomk
// ordered as Prometheus returns them, and native histograms through sum/avg.
import { execution } from '../prom-envelope.ts';
import { invalidQuantileWarning } from './functions/annotations.ts';
import { addHistograms, compactHistogram, divideHistogram } from './functions/histogram-math.ts';
import { kahanInc } from './functions/kahan-sum.ts';
import { quantileOf } from './functions/quantile.ts';
import { formatFloatPlain } from './format-expr.ts';
import { compareUtf8 } from './label-order.ts';
import type { AggregateOp } from './promql-ast.ts';
import { labelsKey, stop } from './eval-series.ts';
import type { FloatHistogram, Labels } from './sample-source.ts';
import type { Vector, VectorElement } from './values.ts';

/** An aggregation's shape: its operator, grouping and where it stands (for annotations). */
export interface AggregationSpec {
  readonly op: AggregateOp;
  readonly grouping: readonly string[];
  readonly without: boolean;
  /** " (1:5)": the position Prometheus appends to annotations. */
  readonly where: string;
}

export interface AggregationOutput {
  readonly vector: VectorElement[];
  readonly annotations: string[];
}

/** The labels of an element's group: `by` keeps the listed labels, `without` drops them and `__name__`. */
export function groupLabels(labels: Labels, grouping: readonly string[], without: boolean): Labels {
  if (without) return labels.filter(([n]) => n !== '__name__' && !grouping.includes(n));
  return labels.filter(([n]) => grouping.includes(n));
}

interface Group {
  readonly labels: Labels;
  count: number;
  f: number;
  mean: number;
  c: number;
  h?: FloatHistogram;
  hasFloat: boolean;
  hasHistogram: boolean;
  incompatible: boolean;
  incrementalMean: boolean;
  seen: boolean;
  dropName: boolean;
  values: number[];
}

const ignored = (op: string, where: string): string => `PromQL info: ignored histogram in ${op} aggregation${where}`;

function newGroup(labels: Labels): Group {
  return {
    labels,
    count: 0,
    f: 0,
    mean: 0,
    c: 0,
    hasFloat: false,
    hasHistogram: false,
    incompatible: false,
    incrementalMean: false,
    seen: false,
    dropName: false,
    values: noValues,
  };
}

// Shared by every group of an operator other than quantile, which never adds to it.
const noValues: number[] = [];

/** Starts group `g` afresh with its step's first element (Prometheus' first-seen initialisation). */
function start(op: AggregateOp, g: Group, e: VectorElement, notes: string[], where: string): void {
  g.count = 1;
  g.f = e.f;
  g.mean = e.f;
  g.c = 0;
  g.h = undefined;
  g.hasFloat = false;
  g.hasHistogram = false;
  g.incompatible = false;
  g.incrementalMean = false;
  g.seen = true;
  g.dropName = e.dropName === true;
  g.values = noValues;
  switch (op) {
    case 'sum':
    case 'avg':
      if (e.h === undefined) g.hasFloat = true;
      else {
        g.h = e.h;
        g.hasHistogram = true;
      }
      break;
    case 'stddev':
    case 'stdvar':
      if (e.h !== undefined) {
        g.seen = false;
        notes.push(ignored(op, where));
      } else g.f = Number.isFinite(e.f) ? 0 : NaN;
      break;
    case 'quantile':
      if (e.h !== undefined) {
        g.seen = false;
        notes.push(ignored(op, where));
      }
      g.values = [e.f];
      break;
    case 'group':
      g.f = 1;
      break;
    case 'min':
    case 'max':
      if (e.h !== undefined) {
        g.seen = false;
        notes.push(ignored(op, where));
      }
      break;
    default:
      break;
  }
}

function addHistogramTo(g: Group, h: FloatHistogram, notes: string[], where: string): void {
  if (g.h === undefined) return;
  const sum = addHistograms(g.h, h);
  if (!sum.ok) {
    notes.push(`PromQL warning: vector contains a mix of histograms with exponential and custom buckets schemas for metric name ""${where}`);
    g.incompatible = true;
    return;
  }
  g.h = sum.value.h;
}

function accumulate(op: AggregateOp, g: Group, e: VectorElement, notes: string[], where: string): void {
  if (g.incompatible) return;
  if (e.dropName === true) g.dropName = true;
  const f = e.f;
  switch (op) {
    case 'sum':
      if (e.h !== undefined) {
        g.hasHistogram = true;
        addHistogramTo(g, e.h, notes, where);
      } else {
        g.hasFloat = true;
        [g.f, g.c] = kahanInc(f, g.f, g.c);
      }
      return;
    case 'avg':
      g.count++;
      if (e.h !== undefined) {
        g.hasHistogram = true;
        addHistogramTo(g, e.h, notes, where);
        return;
      }
      g.hasFloat = true;
      if (!g.incrementalMean) {
        const [v, c] = kahanInc(f, g.f, g.c);
        if (Number.isFinite(v) || Number.isNaN(v)) {
          g.f = v;
          g.c = c;
          return;
        }
        // The sum would overflow: continue with an incremental mean, as Prometheus does.
        g.incrementalMean = true;
        g.mean = g.f / (g.count - 1);
        g.c /= g.count - 1;
      }
      {
        const q = (g.count - 1) / g.count;
        [g.mean, g.c] = kahanInc(f / g.count, q * g.mean, q * g.c);
      }
      return;
    case 'max':
      if (e.h !== undefined) {
        notes.push(ignored(op, where));
        return;
      }
      if (g.f < f || Number.isNaN(g.f)) g.f = f;
      return;
    case 'min':
      if (e.h !== undefined) {
        notes.push(ignored(op, where));
        return;
      }
      if (g.f > f || Number.isNaN(g.f)) g.f = f;
      return;
    case 'count':
      g.count++;
      return;
    case 'stddev':
    case 'stdvar': {
      if (e.h !== undefined) {
        notes.push(ignored(op, where));
        return;
      }
      g.count++;
      const delta = f - g.mean;
      g.mean += delta / g.count;
      g.f += delta * (f - g.mean);
      return;
    }
    case 'quantile':
      if (e.h !== undefined) {
        notes.push(ignored(op, where));
        return;
      }
      g.values.push(f);
      return;
    default:
      return;
  }
}

function finish(op: AggregateOp, g: Group, q: number, notes: string[], where: string): { f: number; h?: FloatHistogram } | undefined {
  switch (op) {
    case 'sum':
    case 'avg': {
      if (g.hasFloat && g.hasHistogram) {
        notes.push(`PromQL warning: encountered a mix of histograms and floats for aggregation${where}`);
        return undefined;
      }
      if (g.incompatible) return undefined;
      if (g.hasHistogram && g.h !== undefined) return { f: 0, h: compactHistogram(op === 'avg' ? divideHistogram(g.h, g.count) : g.h) };
      if (op === 'sum') return { f: g.f + g.c };
      return { f: g.incrementalMean ? g.mean + g.c : g.f / g.count + g.c / g.count };
    }
    case 'count':
      return { f: g.count };
    case 'stdvar':
      return { f: g.f / g.count };
    case 'stddev':
      return { f: Math.sqrt(g.f / g.count) };
    case 'quantile':
      return { f: quantileOf(q, g.values) };
    default:
      return { f: g.f };
  }
}

/** An input series' group: its labels, their key, and a dense number for per-step slots. */
interface GroupOf {
  readonly labels: Labels;
  readonly key: string;
  readonly id: number;
}

/**
 * One aggregation node's grouping, kept across its steps as Prometheus'
 * rangeEval keeps each series' group: an input label set's group is computed
 * once. The node's input elements carry their series' labels array at every
 * step, so a series is found by that array's identity; an unseen array (or
 * another series with equal grouping labels) goes through the group key.
 */
export class Grouping {
  private readonly grouping: readonly string[];
  private readonly without: boolean;
  private readonly byLabels = new Map<Labels, GroupOf>();
  private readonly byKey = new Map<string, GroupOf>();
  /** Per group number: its accumulator, reused from step to step, and the step it was last started at. */
  readonly accumulators: Group[] = [];
  readonly startedAt: number[] = [];
  step = 0;

  constructor(grouping: readonly string[], without: boolean) {
    this.grouping = grouping;
    this.without = without;
  }

  /** The group of an element with `labels`. */
  of(labels: Labels): GroupOf {
    const known = this.byLabels.get(labels);
    if (known !== undefined) return known;
    const own = groupLabels(labels, this.grouping, this.without);
    const key = labelsKey(own);
    let g = this.byKey.get(key);
    if (g === undefined) {
      g = { labels: own, key, id: this.byKey.size };
      this.byKey.set(key, g);
    }
    this.byLabels.set(labels, g);
    return g;
  }
}

/**
 * sum, avg, min, max, count, group, stddev, stdvar, quantile over one step's
 * vector; `grouping` is the node's, shared by its steps (a fresh one per call
 * computes the same answer).
 */
export function aggregate(
  spec: AggregationSpec,
  input: Vector,
  param: number,
  t: number,
  grouping = new Grouping(spec.grouping, spec.without),
): AggregationOutput {
  const notes: string[] = [];
  const step = ++grouping.step;
  const { accumulators, startedAt } = grouping;
  const order: Group[] = [];
  for (const e of input) {
    const of = grouping.of(e.labels);
    const current = startedAt[of.id] === step ? accumulators[of.id] : undefined;
    if (current === undefined || !current.seen) {
      // A group whose first element was ignored starts again at its place in the order.
      const g = current ?? accumulators[of.id] ?? newGroup(of.labels);
      start(spec.op, g, e, notes, spec.where);
      if (current === undefined) {
        order.push(g);
        accumulators[of.id] = g;
        startedAt[of.id] = step;
      }
      continue;
    }
    accumulate(spec.op, current, e, notes, spec.where);
  }
  const vector: VectorElement[] = [];
  for (const g of order) {
    if (!g.seen) continue;
    const v = finish(spec.op, g, param, notes, spec.where);
    if (v === undefined) continue;
    if (v.h === undefined) vector.push(g.dropName ? { labels: g.labels, t, f: v.f, dropName: true } : { labels: g.labels, t, f: v.f });
    else vector.push(g.dropName ? { labels: g.labels, t, f: v.f, h: v.h, dropName: true } : { labels: g.labels, t, f: v.f, h: v.h });
  }
  return { vector, annotations: notes };
}

/** The quantile parameter's warning, once per query as Prometheus checks all steps' values. */
export function quantileParamWarnings(values: readonly number[], where: string): string[] {
  const out: string[] = [];
  if (values.some(Number.isNaN)) out.push(invalidQuantileWarning(NaN) + where);
  const max = Math.max(...values);
  const min = Math.min(...values);
  if (max > 1) out.push(invalidQuantileWarning(max) + where);
  if (min < 0) out.push(invalidQuantileWarning(min) + where);
  return out;
}

/** topk's and bottomk's k checked over all steps, as Prometheus does before evaluating: an error, or whether nothing can be selected. */
export function checkK(values: readonly number[]): 'none' | 'ok' {
  if (values.length === 0 || Math.max(...values) < 1) return 'none';
  if (values.some(Number.isNaN)) stop(execution('Parameter value is NaN'));
  const min = Math.min(...values);
  const max = Math.max(...values);
  if (min <= -(2 ** 63)) stop(execution(`Scalar value ${formatG(min)} underflows int64`));
  if (max >= 2 ** 63) stop(execution(`Scalar value ${formatG(max)} overflows int64`));
  return 'ok';
}

const formatG = (v: number): string => (Number.isInteger(v) && Math.abs(v) < 1e21 ? String(v) : v.toExponential().replace(/e\+?/, 'e+').replace('e+-', 'e-'));

/** topk / bottomk over one step's vector: per group the k largest (smallest), NaN last, in Prometheus' order. */
export function aggregateK(spec: AggregationSpec, input: Vector, param: number, grouping = new Grouping(spec.grouping, spec.without)): AggregationOutput {
  const notes: string[] = [];
  const k = Math.min(Math.trunc(param), input.length);
  if (k < 1) return { vector: [], annotations: notes };
  const groups = new Map<string, VectorElement[]>();
  for (const e of input) {
    const key = grouping.of(e.labels).key;
    if (e.h !== undefined) {
      notes.push(`PromQL info: ignored histogram in ${spec.op} aggregation${spec.where}`);
      if (!groups.has(key)) continue;
      continue;
    }
    const g = groups.get(key);
    if (g === undefined) groups.set(key, [e]);
    else g.push(e);
  }
  const top = spec.op === 'topk';
  // NaN ranks below every number for topk and above every number for bottomk; both put NaN last.
  const rank = (a: VectorElement, b: VectorElement): number => {
    const an = Number.isNaN(a.f);
    const bn = Number.isNaN(b.f);
    if (an || bn) return an === bn ? 0 : an ? 1 : -1;
    return top ? b.f - a.f || 0 : a.f - b.f || 0;
  };
  const vector: VectorElement[] = [];
  for (const g of groups.values()) vector.push(...[...g].sort(rank).slice(0, k));
  return { vector, annotations: notes };
}

/** count_values: how many elements have each value, the value in label `label`. */
export function countValues(spec: AggregationSpec, input: Vector, label: string, t: number): AggregationOutput {
  const counts = new Map<string, { labels: Labels; n: number }>();
  const grouping = spec.without ? spec.grouping : [...spec.grouping, label];
  for (const e of input) {
    const value = e.h === undefined ? formatFloatPlain(e.f) : histogramString(e.h);
    const withValue = [...e.labels.filter(([n]) => n !== label), [label, value] as const].sort((a, b) => compareUtf8(a[0], b[0]));
    const labels = groupLabels(withValue, grouping, spec.without);
    const key = labelsKey(labels);
    const c = counts.get(key);
    if (c === undefined) counts.set(key, { labels, n: 1 });
    else c.n++;
  }
  return { vector: [...counts.values()].map((c) => ({ labels: c.labels, t, f: c.n })), annotations: [] };
}

/** A histogram's text in count_values' label (Prometheus' FloatHistogram.String, its count and sum part). */
function histogramString(h: FloatHistogram): string {
  return `{count:${formatFloatPlain(h.count)}, sum:${formatFloatPlain(h.sum)}}`;
}
