// Typed access to one step's evaluated arguments and the shapes every
// function answers with. The parser has checked the argument types, so a
// mismatch here is a bug in the engine, not a user error.
import { ok } from '../../../../../src/result.ts';
import type { Result } from '../../../../../src/result.ts';
import type { PromError } from '../../prom-envelope.ts';
import type { Vector, WindowMatrix } from '../values.ts';
import type { ArgAnnotation, StepArg, StepOutput } from './function-types.ts';

function argAt(args: readonly StepArg[], i: number, type: StepArg['type']): StepArg {
  const arg = args[i];
  if (arg === undefined || arg.type !== type) throw new Error(`argument ${i} is not a ${type}`);
  return arg;
}

/** The scalar argument at `i`. */
export function scalarArg(args: readonly StepArg[], i: number): number {
  const arg = argAt(args, i, 'scalar');
  return arg.type === 'scalar' ? arg.value : NaN;
}

/** The instant-vector argument at `i`. */
export function vectorArg(args: readonly StepArg[], i: number): Vector {
  const arg = argAt(args, i, 'vector');
  return arg.type === 'vector' ? arg.value : [];
}

/** The range-vector argument at `i`. */
export function matrixArg(args: readonly StepArg[], i: number): WindowMatrix {
  const arg = argAt(args, i, 'matrix');
  return arg.type === 'matrix' ? arg.value : [];
}

/** The string argument at `i`. */
export function stringArg(args: readonly StepArg[], i: number): string {
  const arg = argAt(args, i, 'string');
  return arg.type === 'string' ? arg.value : '';
}

/** A step's answer without annotations (or with them when there are some). */
export function answer(vector: Vector, annotations: readonly (string | ArgAnnotation)[] = []): Result<StepOutput, PromError> {
  return ok(annotations.length === 0 ? { vector } : { vector, annotations });
}
