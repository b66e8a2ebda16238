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
  readonly annotations?: readonly string[];
}

export interface FunctionDef {
  readonly name: string;
  readonly argTypes: readonly ValueTypeName[];
  /** How many trailing arguments may be left out (e.g. round's to_nearest); -1: the last may repeat (label_join). */
  readonly optional: number;
  readonly returnType: 'scalar' | 'vector';
  /**
   * Evaluates one step. Errors are values in Prometheus' terms (e.g.
   * label_replace's invalid regex is bad_data at parse time, a duplicate
   * series after label_replace is execution).
   */
  readonly call: (args: readonly StepArg[], context: CallContext) => Result<StepOutput, PromError>;
}
