// Calls a function of the table directly with hand-built arguments, as the
// evaluator would at one step.
import { expect } from 'chai';
import { functionTable } from '../../../../../../../api/compat/prometheus/engine/functions/function-table.ts';
import type { StepArg, StepOutput } from '../../../../../../../api/compat/prometheus/engine/functions/function-types.ts';
import type { FloatHistogram, LabelMatcher, Labels } from '../../../../../../../api/compat/prometheus/engine/sample-source.ts';
import type { CallContext, Vector, VectorElement, WindowSeries } from '../../../../../../../api/compat/prometheus/engine/values.ts';
import type { PromError } from '../../../../../../../api/compat/prometheus/prom-envelope.ts';
import type { Result } from '../../../../../../../src/result.ts';

/** Calls `name` at step `t` (ms) with a window of `range` ms. */
export function call(
  name: string,
  args: readonly StepArg[],
  t = 60_000,
  range = 60_000,
  selectorMatchers?: readonly LabelMatcher[],
  delayedNameRemoval = false,
): Result<StepOutput, PromError> {
  const def = functionTable.get(name);
  if (def === undefined) throw new Error(`no function ${name}`);
  const context: CallContext = {
    t,
    windowStart: t - range,
    windowEnd: t,
    ...(selectorMatchers === undefined ? {} : { selectorMatchers }),
    ...(delayedNameRemoval ? { delayedNameRemoval } : {}),
  };
  return def.call(args, context);
}

/** The answer's vector, failing the test when the call failed. */
export function vectorOf(result: Result<StepOutput, PromError>): Vector {
  if (!result.ok) throw new Error(`call failed: ${result.error.message}`);
  return result.value.vector;
}

/** The answer's only element. */
export function only(result: Result<StepOutput, PromError>): VectorElement {
  const v = vectorOf(result);
  expect(v).to.have.length(1);
  const [el] = v;
  if (el === undefined) throw new Error('empty');
  return el;
}

/** The answer's only float value. */
export const valueOf = (result: Result<StepOutput, PromError>): number => only(result).f;

/** Expects `actual` within 1e-9 relative of `expected` (NaN equal to NaN, infinities exact). */
export function expectClose(actual: number, expected: number): void {
  if (Number.isNaN(expected) || !Number.isFinite(expected)) {
    expect(Object.is(actual, expected) || (Number.isNaN(actual) && Number.isNaN(expected))).to.equal(true, `${actual} vs ${expected}`);
    return;
  }
  expect(Math.abs(actual - expected)).to.be.at.most(Math.abs(expected) * 1e-9 + 1e-300, `${actual} vs ${expected}`);
}

export const metric: Labels = [
  ['__name__', 'http_requests_total'],
  ['job', 'api'],
];

/** A range argument of one float series: [seconds, value] pairs. */
export function floats(points: readonly (readonly [number, number])[], labels: Labels = metric): StepArg {
  const series: WindowSeries = { labels, floats: points.map(([s, f]) => ({ t: s * 1000, f })), histograms: [] };
  return { type: 'matrix', value: [series] };
}

/** A range argument of one native-histogram series: [seconds, histogram] pairs. */
export function histograms(points: readonly (readonly [number, FloatHistogram])[], labels: Labels = metric): StepArg {
  return { type: 'matrix', value: [{ labels, floats: [], histograms: points.map(([s, h]) => ({ t: s * 1000, h })) }] };
}

export const scalar = (value: number): StepArg => ({ type: 'scalar', value });
export const str = (value: string): StepArg => ({ type: 'string', value });
export const vector = (elements: readonly (readonly [Labels, number])[], t = 60_000): StepArg => ({
  type: 'vector',
  value: elements.map(([labels, f]) => ({ labels, t, f })),
});

/** An exponential histogram (schema 0 unless given) with positive buckets from index `offset`. */
export function nativeHistogram(count: number, sum: number, buckets: readonly number[], offset = 1, extra: Partial<FloatHistogram> = {}): FloatHistogram {
  return {
    counterResetHint: 'unknown',
    schema: 0,
    zeroThreshold: 0.001,
    zeroCount: 0,
    count,
    sum,
    positiveSpans: [{ offset, length: buckets.length }],
    positiveBuckets: buckets,
    negativeSpans: [],
    negativeBuckets: [],
    ...extra,
  };
}
