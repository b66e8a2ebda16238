// Binary operators at one step, as Prometheus' engine (VectorBinop,
// VectorscalarBinop, VectorAnd/Or/Unless, vectorElemBinop): vector matching
// by signature (on/ignoring), one-to-one and group_left/group_right with
// their errors, comparison filtering and `bool`, native histograms where
// Prometheus supports them (+, - between histograms; *, / by a float).
import { addHistograms, compactHistogram, divideHistogram, histogramsEqual, scaleHistogram } from './functions/histogram-math.ts';
import { compareUtf8 } from './label-order.ts';
import type { BinaryOp, VectorMatching } from './promql-ast.ts';
import { changesMetricSchema, isComparison } from './promql-ast.ts';
import { execution } from '../prom-envelope.ts';
import { labelsKey, labelValue, stop } from './eval-series.ts';
import type { FloatHistogram, Labels } from './sample-source.ts';
import type { Vector, VectorElement } from './values.ts';

/** What a binary operation at one step answers, and the infos/warnings it raised. */
export interface BinopOutput {
  readonly vector: VectorElement[];
  readonly annotations: string[];
}

/** Prometheus' scalarBinop: both sides scalars (comparisons only with bool). */
export function scalarBinop(op: BinaryOp, l: number, r: number): number {
  switch (op) {
    case '+':
      return l + r;
    case '-':
      return l - r;
    case '*':
      return l * r;
    case '/':
      return l / r;
    case '^':
      return Math.pow(l, r);
    case '%':
      return goMod(l, r);
    case 'atan2':
      return Math.atan2(l, r);
    case '==':
      return l === r ? 1 : 0;
    case '!=':
      return l !== r ? 1 : 0;
    case '>':
      return l > r ? 1 : 0;
    case '<':
      return l < r ? 1 : 0;
    case '>=':
      return l >= r ? 1 : 0;
    case '<=':
      return l <= r ? 1 : 0;
    default:
      return NaN;
  }
}

/** Go's math.Mod: the sign of the dividend, NaN for x % 0 (JS's % agrees). */
const goMod = (l: number, r: number): number => l % r;

const typeName = (h: FloatHistogram | undefined): string => (h === undefined ? 'float' : 'histogram');

/** One element of a binary operation: its float or histogram, whether it is kept (comparisons filter), and an annotation. Not an ok/fail union. */
interface ElemOutcome {
  readonly f: number;
  readonly h?: FloatHistogram;
  readonly keep: boolean;
  readonly info?: string;
}

/** Prometheus' vectorElemBinop: one pair of values. */
function elemBinop(op: BinaryOp, lf: number, rf: number, lh: FloatHistogram | undefined, rh: FloatHistogram | undefined, where: string): ElemOutcome {
  const incompatible = (): ElemOutcome => ({
    f: 0,
    keep: false,
    info: `PromQL info: incompatible sample types encountered for binary operator "${op}": ${typeName(lh)} ${op} ${typeName(rh)}${where}`,
  });
  if (lh === undefined && rh === undefined) {
    if (isComparison(op)) return { f: lf, keep: scalarBinop(op, lf, rf) === 1 };
    return { f: scalarBinop(op, lf, rf), keep: true };
  }
  if (lh === undefined && rh !== undefined) return op === '*' ? { f: 0, h: compactHistogram(scaleHistogram(rh, lf)), keep: true } : incompatible();
  if (lh !== undefined && rh === undefined) {
    if (op === '*') return { f: 0, h: compactHistogram(scaleHistogram(lh, rf)), keep: true };
    if (op === '/') return { f: 0, h: compactHistogram(divideHistogram(lh, rf)), keep: true };
    return incompatible();
  }
  if (lh === undefined || rh === undefined) return incompatible();
  if (op === '+' || op === '-') {
    const sum = addHistograms(lh, rh, op === '-');
    if (!sum.ok)
      return {
        f: 0,
        keep: false,
        info: `PromQL warning: vector contains a mix of histograms with exponential and custom buckets schemas for metric name ""${where}`,
      };
    const h = compactHistogram(op === '-' ? { ...sum.value.h, counterResetHint: 'gauge' } : sum.value.h);
    return {
      f: 0,
      h,
      keep: true,
      ...(sum.value.boundsReconciled
        ? { info: `PromQL info: mismatched custom buckets were reconciled during ${op === '+' ? 'addition' : 'subtraction'}${where}` }
        : {}),
    };
  }
  if (op === '==') return { f: 0, h: lh, keep: histogramsEqual(lh, rh) };
  if (op === '!=') return { f: 0, h: lh, keep: !histogramsEqual(lh, rh) };
  return incompatible();
}

/** The labels a series is matched by: `on` keeps the listed labels, `ignoring` drops them and `__name__`. */
export function matchLabels(labels: Labels, on: boolean, names: readonly string[]): Labels {
  return on ? labels.filter(([n]) => names.includes(n)) : labels.filter(([n]) => n !== '__name__' && !names.includes(n));
}

/** A label set as Prometheus prints it: {a="b", c="d"}. */
export function labelsString(labels: Labels): string {
  return `{${labels.map(([n, v]) => `${/^[a-zA-Z_][a-zA-Z0-9_]*$/.test(n) ? n : JSON.stringify(n)}=${JSON.stringify(v)}`).join(', ')}}`;
}

function setLabel(labels: Labels, name: string, value: string): Labels {
  const rest = labels.filter(([n]) => n !== name);
  if (value === '') return rest;
  const out = [...rest, [name, value] as const];
  return out.sort((a, b) => compareUtf8(a[0], b[0]));
}

/** Prometheus' resultMetric: the labels of one result element. */
function resultLabels(lhs: Labels, rhs: Labels, op: BinaryOp, m: VectorMatching): Labels {
  let out = changesMetricSchema(op) ? lhs.filter(([n]) => n !== '__name__') : lhs;
  if (m.card === 'one-to-one') out = m.on ? out.filter(([n]) => m.labels.includes(n)) : out.filter(([n]) => !m.labels.includes(n));
  for (const name of m.include) out = setLabel(out, name, labelValue(rhs, name));
  return out;
}

/** Prometheus' VectorBinop: two instant vectors, anything but a set operator. */
export function vectorBinop(op: BinaryOp, lhsIn: Vector, rhsIn: Vector, m: VectorMatching, returnBool: boolean, where: string): BinopOutput {
  const annotations: string[] = [];
  const out: VectorElement[] = [];
  if (lhsIn.length === 0 || rhsIn.length === 0) return { vector: out, annotations };
  const swapped = m.card === 'one-to-many';
  const [lhs, rhs] = swapped ? [rhsIn, lhsIn] : [lhsIn, rhsIn];
  const sig = (l: Labels): string => labelsKey(matchLabels(l, m.on, m.labels));
  const right = new Map<string, VectorElement>();
  for (const rs of rhs) {
    const key = sig(rs.labels);
    const dup = right.get(key);
    if (dup !== undefined) {
      const [a, b] = [labelsString(rs.labels), labelsString(dup.labels)].sort();
      stop(
        execution(
          `found duplicate series for the match group ${labelsString(matchLabels(rs.labels, m.on, m.labels))} on the ${swapped ? 'left' : 'right'} hand-side of the operation: [${a ?? ''}, ${b ?? ''}];many-to-many matching not allowed: matching labels must be unique on one side`,
        ),
      );
    }
    right.set(key, rs);
  }
  const matchedOne = new Set<string>();
  const matchedMany = new Map<string, Set<string>>();
  for (const ls of lhs) {
    const key = sig(ls.labels);
    const rs = right.get(key);
    if (rs === undefined) continue;
    const [l, r] = swapped ? [rs, ls] : [ls, rs];
    const res = elemBinop(op, l.f, r.f, l.h, r.h, where);
    if (res.info !== undefined) annotations.push(res.info);
    const labels = resultLabels(ls.labels, rs.labels, op, m);
    if (m.card === 'one-to-one') {
      if (matchedOne.has(key)) stop(execution('multiple matches for labels: many-to-one matching must be explicit (group_left/group_right)'));
      matchedOne.add(key);
    } else {
      const inserted = matchedMany.get(key) ?? new Set<string>();
      matchedMany.set(key, inserted);
      const resultKey = labelsKey(labels);
      if (inserted.has(resultKey)) stop(execution('multiple matches for labels: grouping labels must ensure unique matches'));
      inserted.add(resultKey);
    }
    if (!res.keep && !returnBool) continue;
    if (returnBool) out.push({ labels, t: ls.t, f: res.keep ? 1 : 0, dropName: true });
    else out.push({ labels, t: ls.t, f: res.f, ...(res.h === undefined ? {} : { h: res.h }) });
  }
  return { vector: out, annotations };
}

/** Prometheus' VectorscalarBinop: `swap` when the scalar is on the left. */
export function vectorScalarBinop(op: BinaryOp, vector: Vector, scalar: number, swap: boolean, returnBool: boolean, where: string): BinopOutput {
  const annotations: string[] = [];
  const out: VectorElement[] = [];
  for (const e of vector) {
    const res = swap ? elemBinop(op, scalar, e.f, undefined, e.h, where) : elemBinop(op, e.f, scalar, e.h, undefined, where);
    if (res.info !== undefined && res.info.startsWith('PromQL warning')) annotations.push(res.info);
    let f = res.f;
    let h = res.h;
    let keep = res.keep;
    // A comparison keeps the vector's value even when the scalar is on the left.
    if (isComparison(op) && swap) {
      f = e.f;
      h = e.h;
    }
    if (returnBool) {
      f = keep ? 1 : 0;
      h = undefined;
      keep = true;
    }
    if (!keep) continue;
    const dropName = e.dropName === true || changesMetricSchema(op) || returnBool;
    out.push({ labels: e.labels, t: e.t, f, ...(h === undefined ? {} : { h }), ...(dropName ? { dropName } : {}) });
  }
  return { vector: out, annotations };
}

/** `and`, `or`, `unless` (many-to-many by signature). */
export function setBinop(op: 'and' | 'or' | 'unless', lhs: Vector, rhs: Vector, m: VectorMatching): VectorElement[] {
  const sig = (l: Labels): string => labelsKey(matchLabels(l, m.on, m.labels));
  if (op === 'or') {
    if (lhs.length === 0) return [...rhs];
    if (rhs.length === 0) return [...lhs];
    const left = new Set(lhs.map((e) => sig(e.labels)));
    return [...lhs, ...rhs.filter((e) => !left.has(sig(e.labels)))];
  }
  if (lhs.length === 0 || rhs.length === 0) return op === 'and' ? [] : [...lhs];
  const right = new Set(rhs.map((e) => sig(e.labels)));
  return lhs.filter((e) => right.has(sig(e.labels)) === (op === 'and'));
}
