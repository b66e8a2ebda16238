// The contract between the PromQL evaluator and the function library: each
// function's signature as the parser checks it, and its implementation over
// one step's evaluated arguments.
import type { Result } from '../../../../../src/result.ts';
import type { PromError } from '../../prom-envelope.ts';
import type { CallContext, Vector, WindowMatrix } from '../values.ts';

/** The argument and return types of PromQL functions. */
export type ValueTypeName = 'scalar' | 'vector' | 'matrix' | 'string';

/** One step's evaluated argument. */
export type StepArg =
  | { readonly type: 'scalar'; readonly value: number }
  | { readonly type: 'vector'; readonly value: Vector }
  | { readonly type: 'matrix'; readonly value: WindowMatrix }
  | { readonly type: 'string'; readonly value: string };

/**
 * A function's answer at one step: a vector (a scalar-returning function
 * answers a one-element vector without labels, which the evaluator turns
 * into the scalar) and any annotations Prometheus would attach (warnings or
 * infos, e.g. "metric might not be a counter").
 */
export interface StepOutput {
  readonly vector: Vector;
  readonly annotations?: readonly (string | ArgAnnotation)[];
  /** Classic histograms histogram_quantile had to make monotonic (Prometheus folds them into one info per query). */
  readonly monotonicityFixes?: readonly MonotonicityFix[];
}

/** An annotation Prometheus places at another argument than the first (a plain string stands at the first). */
export interface ArgAnnotation {
  readonly text: string;
  /** The argument's index in the call. */
  readonly arg: number;
}

/** One classic histogram whose buckets histogram_quantile made monotonic at one step. */
export interface MonotonicityFix {
  /** The info's message without details (with the metric name under delayed name removal). */
  readonly text: string;
  readonly arg: number;
  readonly minBucket: number;
  readonly maxBucket: number;
  readonly maxDiff: number;
}

/**
 * What the evaluator owes the functions (Prometheus' engine does the same):
 * - A function with a matrix argument is called once per step with every
 *   selected series' window; series with no point in the window may be left
 *   out. Its answer keeps each series' labels (with `__name__`) and marks
 *   `dropName` (except last_over_time, which keeps the series' own mark).
 * - `dropName` elements keep `__name__` in their labels until the value leaves
 *   the chain of functions and operators (aggregations, binary operators
 *   matching, the query's answer): then the evaluator removes `__name__` from
 *   marked elements and fails with execution "vector cannot contain metrics
 *   with the same labelset" if two elements of one step now share labels.
 * - timestamp(v): when `v` is a vector selector its elements' `t` is the
 *   sample's own timestamp, otherwise the step's time.
 * - absent()/absent_over_time(): `context.selectorMatchers` carries the
 *   argument's matchers when it is a selector.
 * - A function called with fewer arguments than `argTypes` (the optional
 *   trailing ones, e.g. hour()) gets only those it was given.
 * - A scalar-returning function (time, pi, scalar) answers one element
 *   without labels whose `f` is the scalar.
 */
export interface FunctionDef {
  readonly name: string;
  readonly argTypes: readonly ValueTypeName[];
  /** How many trailing arguments may be left out (e.g. round's to_nearest); -1: the last may repeat (label_join). */
  readonly optional: number;
  readonly returnType: 'scalar' | 'vector';
  /**
   * Evaluates one step. Errors are values in Prometheus' terms: label_replace's
   * invalid regex or label name and a duplicate series after it are
   * `execution` (422), as Prometheus checks them while evaluating, not parsing.
   */
  readonly call: (args: readonly StepArg[], context: CallContext) => Result<StepOutput, PromError>;
}
