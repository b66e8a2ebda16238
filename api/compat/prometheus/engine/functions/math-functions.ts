// The instant functions of one value: math and trigonometry on each float
// element (histograms skipped), clamp and round, sort, timestamp, and the
// scalar/vector conversions time(), pi(), scalar() and vector().
import type { Vector, VectorElement } from '../values.ts';
import type { FunctionDef } from './function-types.ts';
import { answer, scalarArg, vectorArg } from './step-args.ts';

/** An element-wise function of the float elements of its vector argument, marking the name for removal. */
function floatFunc(name: string, f: (x: number) => number): FunctionDef {
  return {
    name,
    argTypes: ['vector'],
    optional: 0,
    returnType: 'vector',
    call: (args) => answer(mapFloats(vectorArg(args, 0), f)),
  };
}

function mapFloats(v: Vector, f: (x: number) => number): Vector {
  const out: VectorElement[] = [];
  for (const el of v) if (el.h === undefined) out.push({ labels: el.labels, t: el.t, f: f(el.f), dropName: true });
  return out;
}

const sgn = (v: number): number => (v < 0 ? -1 : v > 0 ? 1 : v);

function clamp(v: Vector, min: number, max: number): Vector {
  return max < min ? [] : mapFloats(v, (x) => Math.max(min, Math.min(max, x)));
}

/** Sorts float elements by value, NaN last in both directions; histograms are dropped as Prometheus does. */
function sortByValue(v: Vector, descending: boolean): Vector {
  const floats = v.filter((el) => el.h === undefined);
  return [...floats].sort((a, b) => {
    if (Number.isNaN(a.f)) return Number.isNaN(b.f) ? 0 : 1;
    if (Number.isNaN(b.f)) return -1;
    return descending ? b.f - a.f : a.f - b.f;
  });
}

const scalarResult = (f: number, t: number): Vector => [{ labels: [], t, f }];

/** The math, clamp, round, sort and conversion functions. */
export const mathFunctions: readonly FunctionDef[] = [
  floatFunc('abs', Math.abs),
  floatFunc('ceil', Math.ceil),
  floatFunc('floor', Math.floor),
  floatFunc('exp', Math.exp),
  floatFunc('sqrt', Math.sqrt),
  floatFunc('ln', Math.log),
  floatFunc('log2', Math.log2),
  floatFunc('log10', Math.log10),
  floatFunc('sin', Math.sin),
  floatFunc('cos', Math.cos),
  floatFunc('tan', Math.tan),
  floatFunc('asin', Math.asin),
  floatFunc('acos', Math.acos),
  floatFunc('atan', Math.atan),
  floatFunc('sinh', Math.sinh),
  floatFunc('cosh', Math.cosh),
  floatFunc('tanh', Math.tanh),
  floatFunc('asinh', Math.asinh),
  floatFunc('acosh', Math.acosh),
  floatFunc('atanh', Math.atanh),
  floatFunc('rad', (x) => (x * Math.PI) / 180),
  floatFunc('deg', (x) => (x * 180) / Math.PI),
  floatFunc('sgn', sgn),
  {
    name: 'clamp',
    argTypes: ['vector', 'scalar', 'scalar'],
    optional: 0,
    returnType: 'vector',
    call: (args) => answer(clamp(vectorArg(args, 0), scalarArg(args, 1), scalarArg(args, 2))),
  },
  {
    name: 'clamp_min',
    argTypes: ['vector', 'scalar'],
    optional: 0,
    returnType: 'vector',
    call: (args) => answer(clamp(vectorArg(args, 0), scalarArg(args, 1), Infinity)),
  },
  {
    name: 'clamp_max',
    argTypes: ['vector', 'scalar'],
    optional: 0,
    returnType: 'vector',
    call: (args) => answer(clamp(vectorArg(args, 0), -Infinity, scalarArg(args, 1))),
  },
  {
    // Ties round up; the inverse of to_nearest is used as Prometheus does, for the same rounding.
    name: 'round',
    argTypes: ['vector', 'scalar'],
    optional: 1,
    returnType: 'vector',
    call: (args) => {
      const inverse = 1 / (args.length > 1 ? scalarArg(args, 1) : 1);
      return answer(mapFloats(vectorArg(args, 0), (x) => Math.floor(x * inverse + 0.5) / inverse));
    },
  },
  {
    name: 'timestamp',
    argTypes: ['vector'],
    optional: 0,
    returnType: 'vector',
    call: (args) => answer(vectorArg(args, 0).map((el) => ({ labels: el.labels, t: el.t, f: el.t / 1000, dropName: true }))),
  },
  {
    name: 'sort',
    argTypes: ['vector'],
    optional: 0,
    returnType: 'vector',
    call: (args) => answer(sortByValue(vectorArg(args, 0), false)),
  },
  {
    name: 'sort_desc',
    argTypes: ['vector'],
    optional: 0,
    returnType: 'vector',
    call: (args) => answer(sortByValue(vectorArg(args, 0), true)),
  },
  { name: 'time', argTypes: [], optional: 0, returnType: 'scalar', call: (_args, context) => answer(scalarResult(context.t / 1000, context.t)) },
  { name: 'pi', argTypes: [], optional: 0, returnType: 'scalar', call: (_args, context) => answer(scalarResult(Math.PI, context.t)) },
  {
    // One float element: its value; none or several: NaN.
    name: 'scalar',
    argTypes: ['vector'],
    optional: 0,
    returnType: 'scalar',
    call: (args, context) => {
      const floats = vectorArg(args, 0).filter((el) => el.h === undefined);
      return answer(scalarResult(floats.length === 1 ? (floats[0]?.f ?? NaN) : NaN, context.t));
    },
  },
  {
    name: 'vector',
    argTypes: ['scalar'],
    optional: 0,
    returnType: 'vector',
    call: (args, context) => answer(scalarResult(scalarArg(args, 0), context.t)),
  },
];
